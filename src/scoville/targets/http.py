"""Remote OpenAI-compatible endpoints: discovery, the server's own tokenizer, opening.

Discovery (`/v1/models`, llama.cpp's `/props`) happens once before the run with plain blocking
HTTP on purpose: nothing is being timed yet, and a clear error here saves a failed sweep.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any

from scoville.client.openai_sse import OpenAIStreamingServer
from scoville.client.seam import MonotonicClock
from scoville.errors import TargetError, TokenizerError
from scoville.spec.model import BenchmarkSpec
from scoville.targets.base import Target
from scoville.workload.tokenizers import Tokenizer, local_tokenizer


def http_json(
    url: str,
    body: dict[str, Any] | None = None,
    api_key: str | None = None,
    timeout_s: float = 10.0,
) -> Any:
    """GET (body None) or POST JSON; returns the decoded JSON. Raises OSError/ValueError."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    req.add_header("Content-Type", "application/json")
    if api_key:
        req.add_header("Authorization", f"Bearer {api_key}")
    with urllib.request.urlopen(req, timeout=timeout_s) as resp:
        return json.loads(resp.read().decode())


class ServerTokenizer:
    """The server's own tokenizer through /tokenize and /detokenize.

    Speaks both dialects: llama.cpp (`{"content": ...}` -> `{"tokens": [...]}`) and vLLM /
    SGLang (`{"model", "prompt"}` -> `{"tokens": [...]}`, detokenize -> `{"prompt": ...}`).
    Each call is a blocking HTTP request: the driver calls it off the event loop.
    """

    def __init__(self, base_url: str, model: str, api_key: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._key = api_key
        self.name = f"server:{self.base_url}/tokenize"

    def encode(self, text: str) -> list[int]:
        out = http_json(
            self.base_url + "/tokenize",
            {
                "content": text,
                "prompt": text,
                "model": self.model,
                "add_special": False,
                "add_special_tokens": False,
            },
            self._key,
        )
        return [int(t["id"]) if isinstance(t, dict) else int(t) for t in out["tokens"]]

    def decode(self, ids: list[int]) -> str:
        out = http_json(
            self.base_url + "/detokenize", {"tokens": ids, "model": self.model}, self._key
        )
        return str(out.get("content", out.get("prompt", "")))


def probe_server_tokenizer(base_url: str, model: str, api_key: str | None) -> Tokenizer | None:
    tok = ServerTokenizer(base_url, model, api_key)
    try:
        ids = tok.encode("hello world")
        if ids and tok.decode(ids).strip() == "hello world":
            return tok
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return None


def discover(base_url: str, api_key: str | None) -> dict[str, Any]:
    """`/v1/models` (required) and `/props` (llama.cpp, optional) of a server."""
    try:
        models = http_json(base_url.rstrip("/") + "/v1/models", api_key=api_key)
    except urllib.error.HTTPError as exc:
        hint = (
            " Set target.api_key_env to the variable holding the key."
            if exc.code in (401, 403)
            else ""
        )
        raise TargetError(
            f"{base_url}/v1/models answered HTTP {exc.code}.{hint} "
            "scoville needs an OpenAI-compatible server."
        ) from None
    except (OSError, ValueError) as exc:
        raise TargetError(
            f"Cannot reach an OpenAI-compatible server at {base_url} ({exc}). Check that the "
            "server is running and the URL (scheme, host, port) is right; or leave --target "
            "out to benchmark the embedded llama.cpp server."
        ) from None
    info: dict[str, Any] = {"v1_models": models}
    try:
        props = http_json(base_url.rstrip("/") + "/props", api_key=api_key, timeout_s=3)
        info["props"] = {
            k: props[k] for k in ("total_slots", "model_path", "build_info", "n_ctx") if k in props
        }
    except (OSError, ValueError):
        pass
    return info


def model_ids(info: dict[str, Any]) -> list[str]:
    data = info.get("v1_models", {}).get("data") or []
    return [str(m.get("id")) for m in data if isinstance(m, dict) and m.get("id")]


def resolve_api_key(spec: BenchmarkSpec) -> str | None:
    env = spec.target.api_key_env
    if env is None:
        return os.environ.get("OPENAI_API_KEY")
    key = os.environ.get(env)
    if not key:
        raise TargetError(
            f"target.api_key_env names ${env}, but it is not set. Export the "
            "API key in that variable (the key itself is never written to disk)."
        )
    return key


def open_http_target(spec: BenchmarkSpec, base_url: str, kind: str = "http") -> Target:
    """Discover the server, resolve the model and tokenizer, and return an opened Target."""
    key = resolve_api_key(spec)
    info = discover(base_url, key)
    ids = model_ids(info)
    model = spec.target.model or (ids[0] if ids else None)
    if model is None:
        raise TargetError(f"{base_url}/v1/models lists no model; pass --model NAME.")
    if spec.target.model and ids and spec.target.model not in ids:
        raise TargetError(
            f"The server at {base_url} does not serve '{spec.target.model}'; "
            f"it serves: {', '.join(ids)}. Pass one of these with --model."
        )
    tokenizer = local_tokenizer(spec.target.tokenizer, model)
    if tokenizer is None and spec.target.tokenizer in ("auto", "server"):
        tokenizer = probe_server_tokenizer(base_url, model, key)
    if tokenizer is None:
        raise TokenizerError(
            f"No tokenizer for '{model}': the server has no usable /tokenize endpoint and the "
            "model name matches no shipped encoding. Pass --tokenizer PATH/tokenizer.json or "
            "--tokenizer tiktoken:o200k_base so prompts can be made exactly ISL tokens long."
        )
    clock = MonotonicClock()
    server = OpenAIStreamingServer(
        base_url,
        model,
        clock,
        key,
        spec.target.request_timeout_s,
        fresh_connections=spec.target.fresh_connections,
    )
    info["tokenizer"] = tokenizer.name
    return Target(
        server=server,
        clock=clock,
        model=model,
        tokenizer=tokenizer,
        kind=kind,
        info=info,
        metrics_url=base_url.rstrip("/") + "/metrics",
        base_url=base_url,
        context_tokens=context_window(info, model),
    )


def context_window(info: dict[str, Any], model: str) -> int | None:
    """Tokens one request may hold, when the server says: `max_model_len` of the model in
    /v1/models (vLLM, SGLang), else llama.cpp's `n_ctx` / `total_slots` from /props."""
    for m in info.get("v1_models", {}).get("data") or []:
        if isinstance(m, dict) and m.get("id") == model:
            n = m.get("max_model_len")
            if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                return n
    props = info.get("props") or {}
    n_ctx, slots = props.get("n_ctx"), props.get("total_slots") or 1
    if isinstance(n_ctx, int) and isinstance(slots, int) and n_ctx > 0 and slots > 0:
        return n_ctx // slots
    return None
