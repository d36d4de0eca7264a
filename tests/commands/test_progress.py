"""The run's progress display: sizes the sweep as the plans do, and takes per-request calls."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from scoville.commands._progress import (
    ProgressProcess,
    RunProgress,
    progress_for,
    sweep_requests,
)
from scoville.spec.load import load_spec


def test_sweep_size_follows_the_spec() -> None:
    embedded = load_spec()  # 24 measured + 4 warmup at each of c1, c4, c8, c16
    assert sweep_requests(embedded) == {"c1": 28, "c4": 28, "c8": 28, "c16": 28}
    remote = load_spec(None, ["target.url=http://127.0.0.1:8000", "load.concurrency=2"])
    assert sweep_requests(remote) == {"c2": 24}  # 10 x 2 measured + 2 x 2 warmup


def test_progress_shows_stages_points_and_rate() -> None:
    out = io.StringIO()
    con = Console(file=out, width=80, force_terminal=False)
    spec = load_spec(None, ["load.concurrency=1"])
    with RunProgress(con, spec) as progress:
        progress.stage("starting target embedded")
        for done in range(1, 29):
            progress.point("c1", done, 28, 64 * done)
    text = out.getvalue()
    assert "starting target embedded" in text
    assert "point c1" in text and "28/28" in text and "tok/s" in text


def test_a_child_process_draws_what_the_run_sends(tmp_path: Path) -> None:
    spec = load_spec(None, ["load.concurrency=1"])
    out = tmp_path / "display.txt"
    with ProgressProcess(spec, str(out), force_terminal=False, width=80) as progress:
        progress.stage("starting target embedded")
        for done in range(1, 29):
            progress.point("c1", done, 28, 64 * done)
    text = out.read_text()
    assert "starting target embedded" in text
    assert "point c1" in text and "28/28" in text and "tok/s" in text


def test_a_terminal_gets_the_child_process_and_a_captured_output_does_not() -> None:
    spec = load_spec(None, ["load.concurrency=1"])
    tty = Console(file=io.StringIO(), force_terminal=True, width=80)
    assert isinstance(progress_for(tty, spec), ProgressProcess)
    piped = Console(file=io.StringIO(), force_terminal=False)
    assert isinstance(progress_for(piped, spec), RunProgress)


def test_a_dead_display_never_stops_the_run(tmp_path: Path) -> None:
    spec = load_spec(None, ["load.concurrency=1"])
    with ProgressProcess(spec, str(tmp_path / "d.txt"), force_terminal=False) as progress:
        progress._proc.kill()  # the display process dies mid-run
        progress._proc.join(timeout=10)
        for done in range(1, 29):
            progress.point("c1", done, 28, 64 * done)  # no error reaches the run
