"""The embedded server's settings that need no model: threads, memory readings, its log."""

from __future__ import annotations

import os
from pathlib import Path

from scoville.targets.embedded import (
    EmbeddedConfig,
    EmbeddedServer,
    process_rss_mb,
    server_threads,
)


def test_the_server_leaves_the_client_a_core() -> None:
    assert server_threads(0, cores=2) == 1
    assert server_threads(0, cores=1) == 1
    assert server_threads(0, cores=16) == 15
    assert server_threads(3, cores=16) == 3  # an explicit count wins


def test_host_prompt_cache_is_off_by_default() -> None:
    assert EmbeddedConfig().cache_ram_mib == 0


def test_rss_of_this_process_is_read_from_proc() -> None:
    rss = process_rss_mb(os.getpid())
    assert rss is not None
    current_mb, peak_mb = rss
    assert 1.0 < current_mb <= peak_mb < 100_000.0
    assert process_rss_mb(2**22 + 12345) is None  # no such process


def test_a_temp_log_is_removed_on_stop_and_a_run_dir_log_kept(tmp_path: Path) -> None:
    temp = EmbeddedServer(EmbeddedConfig(port=1))
    temp.log_path.write_text("llama.cpp log")
    temp.stop()
    assert not temp.log_path.exists()
    kept = EmbeddedServer(EmbeddedConfig(port=1, log_dir=tmp_path))
    kept.log_path.write_text("llama.cpp log")
    kept.stop()
    assert kept.log_path == tmp_path / "llamacpp.log" and kept.log_path.exists()
