"""AIPerf on the wire benchmark's source: run `aiperf profile` against the same server, under
the same capture, and read its per-request TTFT and chunk gaps (keyed by the `X-Request-ID`
header it sends, which the capture sees) and the CPU its whole process tree used.

AIPerf is not a dependency: pass its executable (`--aiperf PATH`, or `aiperf` on PATH). It
needs a tokenizer to synthesize prompts; a word-level one is made locally with `tokenizers`
from AIPerf's own environment (nothing is downloaded).
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

_MAKE_TOKENIZER = """
import sys
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
words = ["[UNK]", *(f"w{i}" for i in range(2000))]
tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
tok.decoder = decoders.WordPiece()
PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]").save_pretrained(sys.argv[1])
"""


@dataclass(frozen=True, slots=True)
class AiperfRun:
    """Per request id: TTFT (ms) and chunk gaps (ms) as AIPerf measured them; its CPU."""

    ttft_ms: dict[str, float]
    itl_ms: dict[str, list[float]]
    cpu_s: float
    wall_s: float
    tokens: int
    failed: int


def find_aiperf(explicit: str | None) -> str | None:
    """The aiperf executable to use, or None (the benchmark then skips it)."""
    if explicit:
        return explicit if Path(explicit).exists() else None
    return shutil.which("aiperf")


def make_tokenizer(aiperf: str, out_dir: Path) -> Path:
    """A local word-level tokenizer, written with the Python that runs AIPerf."""
    python = Path(aiperf).with_name("python")
    subprocess.run([str(python), "-c", _MAKE_TOKENIZER, str(out_dir)], check=True)
    return out_dir


def run_aiperf(
    aiperf: str,
    url: str,
    streams: int,
    requests: int,
    tokens: int,
    work: Path,
    rate_per_s: float | None = None,
) -> AiperfRun:
    """One AIPerf run (completions, streaming, 3-token prompts, `tokens` out): closed loop
    at `streams`, or evenly spaced arrivals at `rate_per_s` capped at `streams` in flight."""
    tok = work / "tokenizer"
    if not tok.exists():
        make_tokenizer(aiperf, tok)
    out = work / f"aiperf-c{streams}"
    cmd = [aiperf, "profile", "--model", "reference", "--url", url]
    cmd += ["--endpoint-type", "completions", "--streaming", "--tokenizer", str(tok)]
    cmd += ["--concurrency", str(streams), "--request-count", str(requests)]
    cmd += ["--prompt-input-tokens-mean", "3", "--prompt-input-tokens-stddev", "0"]
    cmd += ["--prompt-output-tokens-mean", str(tokens), "--prompt-output-tokens-stddev", "0"]
    cmd += ["--use-legacy-max-tokens", "--output-artifact-dir", str(out), "--ui-type", "none"]
    cmd += ["--no-server-metrics", "--no-gpu-telemetry"]
    if rate_per_s is not None:
        cmd += ["--request-rate", f"{rate_per_s:.3f}", "--arrival-pattern", "constant"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    wall_s = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"aiperf failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return _read(out / "profile_export.jsonl", cpu_s, wall_s)


def _read(path: Path, cpu_s: float, wall_s: float) -> AiperfRun:
    ttft, itl, tokens, failed = {}, {}, 0, 0
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        rid, m = rec["metadata"]["x_request_id"], rec.get("metrics", {})
        if "time_to_first_token" not in m or rec.get("error"):
            failed += 1
            continue
        ttft[rid] = float(m["time_to_first_token"]["value"])
        itl[rid] = [float(v) for v in m.get("inter_chunk_latency", {}).get("value", [])]
        tokens += int(m.get("output_sequence_length", {}).get("value", 0))
    return AiperfRun(ttft, itl, cpu_s, wall_s, tokens, failed)
