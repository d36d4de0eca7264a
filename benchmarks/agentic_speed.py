"""Agentic replay speed on the twin: wall time of one simulated hour of the synthetic
AgentX-like workload at 64 lanes, end to end (`scoville.replay.run_replay`: workload build,
simulation, agentic metrics, the run bundle), on one core.

Run: PYTHONPATH=src python benchmarks/agentic_speed.py [--window-s 3600] [--lanes 64]
     [--target twin:H200/gpt-oss-120b?tp=8] [--driver-window-s 120]
Target: under 60 s for the hour. `--driver-window-s S` also times the asyncio lane driver
(`executor=driver`) on an S-second window and prints its wall seconds per simulated second.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from scoville.replay import build_spec, run_replay

FIELDS = (
    "n_sent",
    "output_tput_per_accelerator",
    "intvty_agentx",
    "median_ttft_hit",
    "median_ttft_miss",
    "cache_hit_rate_measured",
)


def timed(url: str, lanes: int, window_s: float, out: Path) -> tuple[float, dict[str, object]]:
    spec = build_spec(
        "synthetic", None, {"target.url": url, "lanes": [lanes], "window_s": window_s}
    )
    t0 = time.perf_counter()
    (row,) = run_replay(spec, out, nonce=1).rows
    return time.perf_counter() - t0, row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--target", default="twin:H200/gpt-oss-120b?tp=8")
    ap.add_argument("--lanes", type=int, default=64)
    ap.add_argument("--window-s", type=float, default=3600.0)
    ap.add_argument("--driver-window-s", type=float, default=0.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("event engine", args.target, args.window_s)]
        if args.driver_window_s > 0:
            sep = "&" if "?" in args.target else "?"
            runs.append(("lane driver", f"{args.target}{sep}executor=driver", args.driver_window_s))
        for name, url, window_s in runs:
            wall_s, row = timed(url, args.lanes, window_s, Path(tmp))
            sim_s = float(row["window_s"])  # type: ignore[arg-type]
            print(
                f"agentic_speed: {name}: {window_s:g} s window at {args.lanes} lanes "
                f"({sim_s:.0f} s simulated, {row['n_sent']} requests) in {wall_s:.1f} s wall "
                f"= {wall_s / sim_s:.4f} wall s per simulated s ({url})"
            )
            print(
                "  "
                + "  ".join(
                    f"{k} {row[k]:.4g}" if isinstance(row[k], float) else f"{k} {row[k]}"
                    for k in FIELDS
                )
            )


if __name__ == "__main__":
    main()
