"""Bad input, as a user gives it: each malformed spec, override, flag, trace, claim or import
file goes through the real command line (`scoville.cli.main`, in this process) and must exit
with code 2 and a message that names the field, line or file, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from scoville.cli import main
from scoville.client.ports import free_port

BINARY = bytes(range(256)) * 4
BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{b}: &{b} [{', '.join(['*' + a] * 9)}]\n" for a, b in zip("abcdef", "bcdefg", strict=True)
)
AIPERF = {"request_latency": {"unit": "ms", "avg": 10.0}, "time_to_first_token": {"avg": 1.0}}

# (case id, file to write or None, command line with {f} for the file, text the message names)
Case = tuple[str, tuple[str, str | bytes] | None, list[str], str]
CASES: list[Case] = [
    ("spec-binary", ("s.yaml", BINARY), ["spec", "--spec", "{f}"], "binary file"),
    ("spec-recursive-yaml", ("s.yaml", "a: &a [*a]\n"), ["spec", "--spec", "{f}"], "line 1"),
    ("spec-alias-bomb", ("s.yaml", BOMB), ["spec", "--spec", "{f}"], "YAML nodes"),
    ("spec-too-large", ("s.yaml", "name: " + "x" * 1_100_000), ["spec", "--spec", "{f}"], "bytes"),
    ("spec-not-utf8", ("s.yaml", b"name: caf\xe9\n"), ["spec", "--spec", "{f}"], "line 1"),
    ("spec-top-level-list", ("s.yaml", "- 1\n"), ["spec", "--spec", "{f}"], "mapping"),
    ("spec-unknown-field", ("s.yaml", "shap: {}\n"), ["spec", "--spec", "{f}"], "'shap'"),
    (
        "spec-nan-power",
        ("s.json", '{"accelerators": {"power_w_per_accelerator": NaN}}'),
        ["spec", "--spec", "{f}"],
        "accelerators.power_w_per_accelerator",
    ),
    ("spec-bad-toml", ("s.toml", "a = [\n"), ["spec", "--spec", "{f}"], "not valid toml"),
    (
        "spec-isl-too-large",
        ("s.yaml", "shape: {isl_tokens: 1000000000}\n"),
        ["spec", "--spec", "{f}"],
        "shape.isl_tokens",
    ),
    ("spec-missing", None, ["spec", "--spec", "/nonexistent/spec.yaml"], "does not exist"),
    (
        "set-inf-power",
        None,
        ["spec", "--set", "accelerators.power_w_per_accelerator=.inf"],
        "accelerators.power_w_per_accelerator",
    ),
    ("set-nan-rate", None, ["spec", "--set", "load.request_rates_per_s=[.nan]"], "rates"),
    ("set-no-equals", None, ["spec", "--set", "shape.isl_tokens"], "a.b=value"),
    ("set-text-for-int", None, ["spec", "--set", "shape.isl_tokens=abc"], "shape.isl_tokens"),
    ("set-recursive", None, ["spec", "--set", "name=&a [*a]"], "recursive"),
    ("set-osl-too-large", None, ["spec", "--set", "shape.osl_tokens=99999999"], "osl_tokens"),
    ("flag-rates-nan", None, ["spec", "--rates", ".nan"], "--rates"),
    ("flag-rates-inf", None, ["spec", "--rates", "inf"], "--rates"),
    ("flag-huge-concurrency", None, ["spec", "--concurrency", "100000000"], "concurrency"),
    ("flag-huge-isl", None, ["spec", "--isl", "1000000000"], "shape.isl_tokens"),
    ("flag-range-ratio-zero", None, ["spec", "--range-ratio", "0"], "shape.range_ratio"),
    ("flag-port-not-a-number", None, ["spec", "--target", "http://127.0.0.1:abc"], "target.url"),
    ("flag-port-out-of-range", None, ["spec", "--target", "http://127.0.0.1:99999"], "target.url"),
    ("flag-workers", None, ["run", "--workers", "ray:abc", "--out", "{tmp}"], "--workers"),
    (
        "trace-huge-tokens",
        (
            "t.jsonl",
            '{"timestamp": 0, "input_length": 1000000000000, "output_length": 4, '
            '"hash_ids": [1]}\n',
        ),
        ["replay", "{f}"],
        "input_length",
    ),
    (
        "trace-bad-line",
        (
            "t.jsonl",
            '{"timestamp": 0, "input_length": 5, "output_length": 4, "hash_ids": [1]}\n'
            '{"timestamp": "soon", "input_length": 5, "output_length": 4, "hash_ids": [1]}\n',
        ),
        ["replay", "{f}"],
        ":2:",
    ),
    ("trace-binary-jsonl", ("t.jsonl", BINARY), ["replay", "{f}"], "binary"),
    ("trace-binary-json", ("t.json", BINARY), ["replay", "{f}"], "binary"),
    (
        "trace-weka-negative",
        ("w.json", json.dumps({"id": "x", "block_size": 64, "requests": [{"type": "n", "t": -1}]})),
        ["replay", "{f}"],
        "'t'",
    ),
    (
        "agentic-spec-recursive",
        ("a.yaml", "a: &a [*a]\n"),
        ["replay", "synthetic", "--spec", "{f}"],
        "recursive",
    ),
    ("claim-binary", ("c.yaml", BINARY), ["claims", "audit", "{f}"], "binary"),
    ("claim-recursive", ("c.yaml", "a: &a {b: *a}\n"), ["claims", "audit", "{f}"], "line 1"),
    ("claim-not-a-claim", ("c.yaml", "schema: nope\n"), ["claims", "audit", "{f}"], "claim"),
    ("import-binary", ("i.json", BINARY), ["import", "{f}", "--out", "{tmp}"], "binary"),
    ("import-unknown", ("i.json", '"hello"'), ["import", "{f}", "--out", "{tmp}"], "unknown"),
    (
        "import-aiperf-odd-config",
        ("i.json", json.dumps({**AIPERF, "input_config": ["x"]})),
        ["import", "{f}", "--out", "{tmp}"],
        "input_config",
    ),
    (
        "import-aiperf-odd-concurrency",
        ("i.json", json.dumps({**AIPERF, "input_config": {"loadgen": {"concurrency": "many"}}})),
        ["import", "{f}", "--out", "{tmp}"],
        "input_config.loadgen.concurrency",
    ),
    (
        "import-aiperf-odd-unit",
        ("i.json", json.dumps({**AIPERF, "request_latency": {"unit": "parsec", "avg": 3}})),
        ["import", "{f}", "--out", "{tmp}"],
        "request_latency.unit",
    ),
    (
        "import-aiperf-odd-telemetry",
        ("i.json", json.dumps({**AIPERF, "telemetry_data": {"endpoints": {"a": [1]}}})),
        ["import", "{f}", "--out", "{tmp}"],
        "telemetry_data.endpoints.a",
    ),
    ("report-not-a-run", None, ["report", "{tmp}"], "No run found"),
    ("export-bad-format", None, ["export", "{tmp}", "--format", "xml"], "xml"),
    ("resume-not-a-dir", None, ["resume", "/nonexistent/run"], "not a directory"),
    (
        "replay-warmup-with-timestamps",
        None,
        ["replay", "synthetic", "--schedule", "timestamps", "--warmup-per-lane", "10"],
        "warmup.requests_per_lane",
    ),
    ("flag-margin-stat", None, ["spec", "--margin-stats", "p95_ttft"], "unknown statistic"),
    ("flag-margin-range", None, ["spec", "--target-margin", "1.5"], "load.target_margin"),
    (
        "margin-below-the-rule",
        None,
        [
            *("run", "--target", "twin:H200/Llama-3.1-8B", "--target-margin", "0.05"),
            *("--requests-per-point", "100", "--out", "{tmp}"),
        ],
        "needs at least 368 successful requests",
    ),
]


def _invoke(
    args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["scoville", *args])
    monkeypatch.setenv("COLUMNS", "300")  # one paragraph stays on one line
    with pytest.raises(SystemExit) as exited:
        main()
    out = capsys.readouterr()
    code = exited.value.code
    return (code if isinstance(code, int) else 1), out.out + out.err


@pytest.mark.parametrize(("name", "file", "argv", "names"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_exits_2_naming_what_is_wrong(
    name: str,
    file: tuple[str, str | bytes] | None,
    argv: list[str],
    names: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "in"
    if file is not None:
        path = tmp_path / file[0]
        data = file[1]
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
    args = [a.format(f=path, tmp=tmp_path) for a in argv]
    code, text = _invoke(args, monkeypatch, capsys)
    assert code == 2, text[-2000:]
    assert "Traceback" not in text
    assert names.lower() in " ".join(text.split()).lower(), text[-2000:]


def test_the_table_holds_at_least_25_cases() -> None:
    assert len(CASES) >= 25


@pytest.fixture(scope="module")
def twin_url() -> Iterator[str]:
    """The HTTP twin, which states its model's context window (131,072 tokens)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "scoville.cli", "twin", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/v1/models", timeout=1).read()
            break
        except OSError:
            time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def test_a_shape_past_the_targets_context_window_is_refused_before_measuring(
    twin_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["run", "--target", twin_url, "--isl", "131000", "--osl", "1000"]
    code, text = _invoke([*args, "--out", str(tmp_path)], monkeypatch, capsys)
    assert code == 2, text[-2000:]
    assert "context window" in text and "131072" in text and "shape.isl_tokens" in text
    assert list(tmp_path.iterdir()) == []  # refused before measuring: no run directory
