"""The inlined bundle comes from the cache once made, keyed by the library versions."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoville.report import vega


def test_bundle_is_read_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCOVILLE_CACHE_DIR", str(tmp_path))
    path = vega.bundle_path()
    assert path.parent == tmp_path and "6.2.0" not in path.name  # a hash, not a version list
    path.write_text("window.vegaEmbed = 'cached';")
    vega.bundle.cache_clear()
    try:
        assert vega.bundle() == "window.vegaEmbed = 'cached';"
    finally:
        vega.bundle.cache_clear()
