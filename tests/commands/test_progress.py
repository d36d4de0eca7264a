"""The run's progress display: sizes the sweep as the plans do, and takes per-request calls."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from scoville.commands._progress import (
    ProgressProcess,
    RunProgress,
    progress_for,
    sweep_requests,
)
from scoville.pipeline import run_benchmark
from scoville.spec.load import load_spec


def test_sweep_size_follows_the_spec() -> None:
    embedded = load_spec()  # 16 measured + 2 warmup at each of c1, c4, c8, c16
    assert sweep_requests(embedded) == {"c1": 18, "c4": 18, "c8": 18, "c16": 18}
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


# Statistical stopping: c1 reaches its target margin after 36 of its 200 requests.
EARLY = ["load.concurrency=1,4", "load.requests_per_point=200", "load.warmup_requests=0"]


def _early_stop(progress: RunProgress | ProgressProcess) -> None:
    for done in range(1, 37):
        progress.point("c1", done, 200, 16 * done)
    progress.point_end("c1", 36, 200, "margin reached at 36 of 200")


def test_a_point_that_stops_early_ends_complete_and_leaves_the_eta() -> None:
    out = io.StringIO()
    spec = load_spec(None, EARLY)
    with RunProgress(Console(file=out, width=120, force_terminal=False), spec) as progress:
        _early_stop(progress)
        assert progress.bar("c1") == (36, 36, "point c1 (margin reached at 36 of 200)")
        # 36 sent + c4's 200 to come; c1's 164 unsent requests are out of the sweep's total
        assert progress.bar("sweep")[:2] == (36, 236)
        for done in range(1, 201):
            progress.point("c4", done, 200, 16 * done)
        assert progress.bar("sweep")[:2] == (236, 236)
    text = out.getvalue()
    assert "margin reached at 36 of 200" in text and "36/36" in text and "236/236" in text
    assert "36/200" not in text.splitlines()[-1]


def test_the_child_process_ends_an_early_point_complete(tmp_path: Path) -> None:
    spec = load_spec(None, EARLY)
    out = tmp_path / "display.txt"
    with ProgressProcess(spec, str(out), force_terminal=False, width=120) as progress:
        _early_stop(progress)
        for done in range(1, 201):
            progress.point("c4", done, 200, 16 * done)
    final = out.read_text()
    assert "point c1 (margin reached at 36 of 200)" in final and "36/36" in final
    assert "236/236" in final  # the sweep's bar ends full too


def test_a_run_that_reaches_its_margin_tells_the_display(tmp_path: Path) -> None:
    sets = ["target.url=twin:H200/Llama-3.1-8B?executor=fast", "shape.isl_tokens=256"]
    sets += ["shape.osl_tokens=16", "load.target_margin=0.05", "load.margin_stats=p90_ttft"]
    spec = load_spec(None, [*sets, *EARLY])
    with RunProgress(Console(file=io.StringIO(), force_terminal=False), spec) as progress:
        run_benchmark(spec, tmp_path, progress.point, on_point_end=progress.point_end)
        # the twin's requests of one shape take equal time: a p90 interval exists at n=36
        # (0.9^36 = 0.0225 <= 0.025), so c1 stops there; c4 sends 3 more already in flight
        assert progress.bar("c1") == (36, 36, "point c1 (margin reached at 36 of 200)")
        assert progress.bar("c4") == (39, 39, "point c4 (margin reached at 39 of 200)")
        assert progress.bar("sweep")[:2] == (75, 75)


def test_a_points_rate_counts_from_its_start(monkeypatch: pytest.MonkeyPatch) -> None:
    import scoville.commands._progress as display

    clock = iter([0.0, 10.0, 20.0])  # the start, then two completions 10 s apart
    monkeypatch.setattr(display.time, "monotonic", lambda: next(clock))
    out = io.StringIO()
    spec = load_spec(None, ["load.concurrency=1"])
    with RunProgress(Console(file=out, width=100, force_terminal=False), spec) as progress:
        progress.point("c1", 0, 28, 0)
        progress.point("c1", 1, 28, 640)
        progress.point("c1", 2, 28, 1280)
        assert progress.bar("c1")[:2] == (2, 28)
    # 1280 tokens in the 20 s since the point started (not 128 tok/s over the 10 s since the
    # first completion)
    assert "64 tok/s" in out.getvalue().splitlines()[-1]


def test_every_point_announces_its_start_before_its_first_request_ends(tmp_path: Path) -> None:
    sets = ["target.url=twin:H200/Llama-3.1-8B?executor=fast", "shape.isl_tokens=64"]
    spec = load_spec(None, [*sets, "shape.osl_tokens=8", "load.concurrency=1,4"])
    calls: list[tuple[str, int, int, int]] = []
    run_benchmark(spec, tmp_path, lambda *a: calls.append(a))
    for point_id in ("c1", "c4"):
        mine = [c for c in calls if c[0] == point_id]
        assert mine[0][1:] == (0, mine[0][2], 0) and [c[1] for c in mine[1:3]] == [1, 2]
