"""`scoville history` and `scoville check` over a store holding runs of two workload shapes
(OSL 256 and OSL 64 on the twin): separate series, a filter that names what it left out, and
a check whose note and `latest` baseline follow the same like-for-like rule."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scoville.cli import app
from scoville.pipeline import run_benchmark
from scoville.spec.load import load_spec

runner = CliRunner()
TWIN = "twin:H200/gpt-oss-120b?tp=8&executor=fast"


def _run(out: Path, osl: int) -> Path:
    sets = [f"target.url={TWIN}", "shape.isl_tokens=1024", f"shape.osl_tokens={osl}"]
    spec = load_spec(None, [*sets, "load.concurrency=1,4"])
    run_dir = run_benchmark(spec, out).run_dir
    time.sleep(1.0)  # a run id is its start second and spec hash: nightly runs differ in both
    return run_dir


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], list[str]]:
    """Runs of OSL 256, 64, 256, 64 (oldest first), added to one store."""
    out = tmp_path_factory.mktemp("mixed")
    with pytest.MonkeyPatch.context() as mp:  # never into a store the developer configured
        mp.delenv("SCOVILLE_STORE", raising=False)
        mp.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
        runs = [_run(out / f"n{i}", osl) for i, osl in enumerate((256, 64, 256, 64))]
    store = ["--store", str(out / "store")]
    r = runner.invoke(app, ["store", "add", *map(str, runs), *store])
    assert r.exit_code == 0, r.output
    return runs, store


def _history(store: list[str], *extra: str) -> str:
    args = ["history", "--model", "gpt-oss-120b", "--system", "H200", "--point", "c4"]
    r = runner.invoke(app, [*args, *store, *extra], env={"COLUMNS": "250"})
    assert r.exit_code == 0, r.output
    return r.output


def test_history_draws_one_series_per_shape(
    mixed: tuple[list[Path], list[str]], tmp_path: Path
) -> None:
    runs, store = mixed
    text = _history(store, "--chart", str(tmp_path / "h.svg"))
    assert "these 4 runs are of 2 shapes that are not like for like" in text
    assert "ISL 1024 / OSL 256, range ratio 1, MXFP4 (2 runs)" in text
    assert "ISL 1024 / OSL 64, range ratio 1, MXFP4 (2 runs)" in text
    assert "apart from the first series: osl_tokens differs: 64 vs 256" in text
    long_, short = text.split("OSL 64, range ratio 1")  # the second table follows its title
    assert runs[0].name in long_ and runs[2].name in long_ and runs[1].name not in long_
    assert runs[1].name in short and runs[3].name in short
    svg = (tmp_path / "h.svg").read_text(encoding="utf-8")
    assert "OSL 256" in svg and "OSL 64" in svg  # one line per shape, named


def test_history_filtered_to_one_shape_says_what_it_left_out(
    mixed: tuple[list[Path], list[str]],
) -> None:
    runs, store = mixed
    text = _history(store, "--osl", "64")
    assert "not like for like" not in text and "MXFP4 (2 runs)" in text
    assert "OSL 256, range ratio 1, MXFP4 (2 runs)" not in text  # no OSL 256 series
    assert (
        f"left out 2 runs of ISL 1024 / OSL 256, range ratio 1, MXFP4 (OSL 256, not 64): "
        f"{runs[0].name} ... {runs[2].name}"
    ) in text


def test_a_shape_no_run_has_is_a_user_error(mixed: tuple[list[Path], list[str]]) -> None:
    _, store = mixed
    args = ["history", "--model", "gpt-oss-120b", "--system", "H200", "--point", "c4"]
    r = runner.invoke(app, [*args, *store, "--osl", "128"])
    assert r.exit_code != 0  # a UserError: exit 2 from the command line
    assert "the stored shapes are: ISL 1024 / OSL 256" in str(r.exception).replace("\n", " ")


def test_check_notes_unlike_runs_and_latest_picks_a_like_one(
    mixed: tuple[list[Path], list[str]],
) -> None:
    runs, store = mixed
    r = runner.invoke(app, ["check", str(runs[3]), "--baseline", str(runs[2]), *store])
    note = " ".join(r.output.split())
    assert "the runs are not like for like (osl_tokens differs: 64 vs 256;" in note
    r = runner.invoke(app, ["check", runs[3].name, "--baseline", "latest", *store])
    assert r.exit_code == 0, r.output
    assert f"vs baseline {runs[1].name}" in r.output.replace("\n", "")  # OSL 64, not 256
    assert "not like for like" not in r.output
