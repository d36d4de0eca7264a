"""`scoville simulate` and `scoville twin serve` through typer (a clear message for bad
input), and the spec a simulation runs built from its options."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from scoville.commands.twin import app
from scoville.errors import TargetError, UserError
from scoville.twin.frontier import frontier_rows
from scoville.twin.options import TwinOptions
from scoville.twin.simulate import run_plans, twin_spec


def test_simulate_prints_the_frontier_table() -> None:
    r = CliRunner().invoke(
        app,
        [
            "simulate",
            "--hardware",
            "H200",
            "--model",
            "gpt-oss-120b",
            "--isl",
            "1024",
            "--osl",
            "64",
            "--concurrency",
            "1,4",
            "--no-bundle",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "TPOT" in r.output and "ISL 1024 / OSL 64" in r.output
    assert "│    1 │" in r.output and "│    4 │" in r.output
    assert "hardware source: NVIDIA H200 datasheet" in r.output


def test_simulate_shows_assumed_fields() -> None:
    r = CliRunner().invoke(
        app,
        [
            "simulate",
            "--hardware",
            "Jalapeno-B0",
            "--isl",
            "256",
            "--osl",
            "16",
            "--concurrency",
            "1",
            "--no-bundle",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "assumed" in r.output and "hbm_gb" in r.output


def test_bad_input_raises_user_errors() -> None:
    r = CliRunner().invoke(app, ["simulate", "--hardware", "H900", "--no-bundle"])
    assert isinstance(r.exception, TargetError)
    r = CliRunner().invoke(app, ["simulate", "--concurrency", "1,x", "--no-bundle"])
    assert isinstance(r.exception, UserError)
    r = CliRunner().invoke(app, ["twin", "serve", "--speedup", "0"])
    assert isinstance(r.exception, UserError)


def test_weights_that_leave_no_kv_room_name_the_memory_the_engine_sees() -> None:
    """An H100 reports 85.9e9 bytes (80 GiB), not the 80 GB it is sold as; Kimi-K2.5's
    weights (594 GB) need more than six of them."""
    r = CliRunner().invoke(app, ["simulate", "--hardware", "H100", "--model", "Kimi-K2.5"])
    assert isinstance(r.exception, TargetError)
    msg = " ".join(str(r.exception).split())
    assert "on 1 x H100 (86 GB each as the driver reports it)" in msg and "raise tp" in msg


def test_twin_url_and_spec_describe_the_deployment() -> None:
    opts = TwinOptions.build(hardware="GB200", model="gpt-oss-120b", tp=2, replicas=2, disagg=None)
    url = opts.url()
    assert url == "twin:GB200/gpt-oss-120b?tp=2&replicas=2"
    assert TwinOptions.parse_url(url) == opts
    cfg = opts.config()
    spec_model = twin_spec(
        opts,
        cfg,
        shape={"isl_tokens": 512, "osl_tokens": 16},
        load={"concurrency": [1, 2], "requests_per_point": 4, "warmup_requests": 0},
    )
    points = run_plans(cfg, spec_model)
    spec = spec_model.to_dict()
    assert spec["accelerators"] == {
        "kind": "GB200",
        "count": 4,
        "power_w_per_accelerator": 1200,
        "power_boundary": "package-tdp",
    }
    assert spec["load"]["concurrency"] == [1, 2]
    assert spec["serving"]["data_parallel"] == 2
    rows = frontier_rows(points)
    assert [r.point_id for r in rows] == ["c1", "c2"]
    # 4 requests of 512 + 16 tokens in the window, over 4 GPUs
    p = points[0]
    span_s = (p.window.end_ns - p.window.start_ns) / 1e9
    assert rows[0].tput_per_gpu == pytest.approx(4 * 528 / span_s / 4)


def test_simulate_writes_a_bundle_with_twin_fields(tmp_path: object) -> None:
    import json
    from pathlib import Path

    r = CliRunner().invoke(
        app,
        ["simulate", "--isl", "512", "--osl", "16", "--concurrency", "1,4", "--out", str(tmp_path)],
    )
    assert r.exit_code == 0, r.output
    (run_dir,) = Path(str(tmp_path)).iterdir()
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    rows = summary["points"]
    assert [p["point_id"] for p in rows] == ["c1", "c4"]
    for p in rows:
        assert p["bottleneck"] in ("compute", "memory", "comm", "overhead")
        assert 0 <= p["kv_occupancy_max"] <= 1 and p["n_ok"] == p["n_sent"]
    assert summary["labels"]["system"] == "H200"
    assert not (run_dir / "records.jsonl").exists()  # records only when asked
    assert "done in" in r.output and "s wall" in r.output


def test_simulate_writes_records_when_asked(tmp_path: object) -> None:
    import json
    from pathlib import Path

    args = ["simulate", "--isl", "256", "--osl", "8", "--concurrency", "1", "--records"]
    r = CliRunner().invoke(app, [*args, "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    (run_dir,) = Path(str(tmp_path)).iterdir()
    lines = (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()
    kinds = [json.loads(line)["type"] for line in lines]
    # c1: 10 measured + 2 warmup requests (10 x and 2 x concurrency), then the window
    assert kinds.count("record") == 12 and kinds.count("window") == 1


def test_twin_options_round_trip_through_the_url() -> None:
    url = (
        "twin:GB200/DeepSeek-R1?tp=8&ep=8&precision=fp4&disagg=2P1D&kv_link=network"
        "&prefix_caching=0&prefix_cache=unlimited&hbm_efficiency=0.7&executor=fast"
    )
    opts = TwinOptions.parse_url(url)
    assert (opts.tp, opts.ep, opts.disagg, opts.prefix_caching) == (8, 8, "2P1D", False)
    assert opts.prefix_cache == "unlimited" and opts.hbm_efficiency == 0.7
    assert opts.url() == url and TwinOptions.parse_url(opts.url()) == opts
    cfg = opts.config()
    assert cfg.disagg is not None and (cfg.disagg.prefill_replicas, cfg.disagg.kv_link) == (
        2,
        "network",
    )
    assert cfg.engine.prefix_cache_tokens == -1 and not cfg.engine.prefix_caching
    # 2 prefill + 1 decode replicas of TP8
    assert cfg.n_accelerators == 24
    with pytest.raises(TargetError, match="executor='slow' must be one of driver, fast"):
        TwinOptions.parse_url("twin:H200/gpt-oss-120b?executor=slow")


def test_simulate_declares_an_untuned_kernel_path() -> None:
    def tpot_ms(kernels: str) -> float:
        args = ["simulate", "--hardware", "MI300X", "--model", "Qwen3.5-397B-A17B", "--tp", "8"]
        args += ["--precision", "fp8", "--framework", "sglang", "--kernels", kernels]
        args += ["--isl", "1024", "--osl", "32", "--concurrency", "16", "--no-bundle"]
        r = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
        assert r.exit_code == 0, r.output
        title = "".join(r.output.split())  # the URL in the title may wrap
        assert ("kernels=untuned" in title) == (kernels == "untuned")
        row = next(line for line in r.output.splitlines() if line.startswith("│   16 │"))
        return float(row.split("│")[6])

    # every weight operator at the untuned scale (0.35): at 16 sequences the step streams
    # expert weights for about half its time, so TPOT grows by half or more, and by less
    # than 1 / 0.35 (the fixed per-layer costs stay)
    tuned, untuned = tpot_ms("tuned"), tpot_ms("untuned")
    assert 1.3 * tuned < untuned < tuned / 0.35
    bad = CliRunner().invoke(app, ["simulate", "--kernels", "slow", "--no-bundle"])
    assert isinstance(bad.exception, TargetError) and "Option kernels" in str(bad.exception)
