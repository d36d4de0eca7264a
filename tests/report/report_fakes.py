"""Hand-made summary rows and run bundles for the report's tests (numbers chosen by hand)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scoville.bundle.files import write_json
from scoville.bundle.summary import summary_doc, write_summary

LABELS = {"model": "m", "framework": "vllm", "precision": "fp8", "spec_decode": "none"}


def row(
    pid: str,
    conc: int,
    intvty: float,
    tput: float,
    e2e_s: float,
    system: str = "A",
    **extra: Any,
) -> dict[str, Any]:
    """A point: TTFT p50 10 ms, p99 30 ms at every load; TPOT = 1 / interactivity."""
    r: dict[str, Any] = {
        "point_id": pid,
        "mode": "concurrency",
        "conc": conc,
        "request_rate": None,
        "n_sent": 40,
        "n_ok": 40,
        "failure_rate": 0.0,
        "valid": True,
        "median_intvty": intvty,
        "tput_per_gpu": tput,
        "median_e2e": e2e_s,
        "median_ttft": 0.010,
        "p90_ttft": 0.020,
        "p99_ttft": 0.030,
        "median_tpot": 1.0 / intvty,
        "n_accelerators": 8,
        "system": system,
        **LABELS,
    }
    r.update(extra)
    return r


def write_run(path: Path, rows: list[dict[str, Any]], system: str) -> Path:
    """A run directory with summary, spec and manifest (no records: no intervals)."""
    doc = summary_doc(path.name, rows, spec_hash="feedc0ffee123456", labels={"system": system})
    write_summary(path, doc)
    write_json(path / "spec.json", {"spec": {"shape": {"isl_tokens": 128, "osl_tokens": 32}}})
    manifest = {"client": {"scoville": "9.9.9"}, "target": {"kind": "twin", "model": "m"}}
    write_json(path / "manifest.json", manifest)
    return path


def sweep_a() -> list[dict[str, Any]]:
    """Four points; c16 is invalid with a reason and sits below the frontier."""
    return [
        row("c1", 1, 300.0, 200.0, 0.9),
        row("c4", 4, 280.0, 700.0, 1.0),
        row("c16", 16, 240.0, 1500.0, 1.2, valid=False, invalid_reason="loop lag 41 ms"),
        row("c64", 64, 160.0, 6000.0, 1.7),
    ]


def sweep_b() -> list[dict[str, Any]]:
    return [
        row("c1", 1, 310.0, 210.0, 0.85, system="B"),
        row("c4", 4, 290.0, 800.0, 0.9, system="B"),
        row("c16", 16, 260.0, 2600.0, 1.0, system="B"),
        row("c64", 64, 200.0, 8000.0, 1.3, system="B"),
    ]
