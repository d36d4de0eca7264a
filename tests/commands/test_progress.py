"""The run's progress display: sizes the sweep as the plans do, and takes per-request calls."""

from __future__ import annotations

import io

from rich.console import Console

from scoville.commands._progress import RunProgress, sweep_requests
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
