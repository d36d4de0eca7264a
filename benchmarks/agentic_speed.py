"""Agentic replay speed on the twin: wall time of one simulated hour of the synthetic
AgentX-like workload at 64 lanes, end to end (`scoville.replay.run_replay`: workload build,
simulation, agentic metrics, the run bundle), on one core (one Python process).

Run: PYTHONPATH=src python benchmarks/agentic_speed.py [--window-s 3600] [--lanes 64]
     [--target twin:H200/gpt-oss-120b?tp=8] [--compare-s 300]
Target: under 60 s for the hour. `--compare-s S` first replays an S-second window on both
engines (the asyncio lane driver, `executor=driver`, and the event engine) and prints each
one's seconds and the relative difference of the agentic metrics.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from scoville.replay import build_spec, run_replay

FIELDS = (
    "n_sent",
    "output_tput_per_accelerator",
    "req_per_s",
    "intvty_agentx",
    "intvty_inferencex",
    "median_ttft_hit",
    "median_ttft_miss",
    "p90_ttft_miss",
    "cache_hit_rate_measured",
    "median_session_makespan",
)


def timed(url: str, lanes: int, window_s: float, out: Path) -> dict[str, Any]:
    """One replay; its summary row with `wall_s` and `cpu_s` added."""
    spec = build_spec(
        "synthetic", None, {"target.url": url, "lanes": [lanes], "window_s": window_s}
    )
    t0, c0 = time.perf_counter(), time.process_time()
    (row,) = run_replay(spec, out, nonce=1).rows
    return row | {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}


def report(name: str, url: str, lanes: int, row: dict[str, Any]) -> None:
    sim_s = float(row["window_s"])
    print(
        f"agentic_speed: {name}: {lanes} lanes, {sim_s:.0f} s simulated, {row['n_sent']} "
        f"requests: {row['wall_s']:.1f} s wall, {row['cpu_s']:.1f} s CPU "
        f"= {row['cpu_s'] / sim_s:.4f} CPU s per simulated s ({url})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--target", default="twin:H200/gpt-oss-120b?tp=8")
    ap.add_argument("--lanes", type=int, default=64)
    ap.add_argument("--window-s", type=float, default=3600.0)
    ap.add_argument("--compare-s", type=float, default=0.0)
    args = ap.parse_args()
    sep = "&" if "?" in args.target else "?"
    with tempfile.TemporaryDirectory() as tmp:
        if args.compare_s > 0:
            rows = {}
            for name, ex in (("lane driver", "driver"), ("event engine", "fast")):
                url = f"{args.target}{sep}executor={ex}"
                rows[name] = timed(url, args.lanes, args.compare_s, Path(tmp))
                report(name, url, args.lanes, rows[name])
            for k in FIELDS:
                a, b = rows["lane driver"][k], rows["event engine"][k]
                rel = (b - a) / a if a else 0.0
                print(f"  {k:<30} driver {a:<12.6g} event engine {b:<12.6g} diff {rel:+.3%}")
        row = timed(args.target, args.lanes, args.window_s, Path(tmp))
        report("event engine", args.target, args.lanes, row)


if __name__ == "__main__":
    main()
