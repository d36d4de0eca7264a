"""`TwinOptions`: the one typed description of a simulated deployment. A `twin:HW/MODEL?k=v`
URL parses into it, `scoville simulate` / `twin serve` flags build it directly (their help is
its field descriptions), and `config()` turns it into the engine's `TwinConfig`.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace
from datetime import date
from typing import Any, Literal, get_args, get_origin
from urllib.parse import parse_qsl, urlencode

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from scoville.errors import TargetError
from scoville.twin.catalogue import load_catalogue
from scoville.twin.cluster import DisaggConfig, Router, TwinConfig
from scoville.twin.costmodel import Efficiency, KvDtype, Parallel
from scoville.twin.deploy import Deployment, KernelPath, Switch, apply_deploy_options
from scoville.twin.engine import EngineConfig
from scoville.twin.profiles import ProfileBook
from scoville.twin.shape import Precision

_URL = re.compile(r"^twin:(?P<hw>[^/?]+)/(?P<model>[^?]+)(?:\?(?P<query>.*))?$")
_DISAGG = re.compile(r"(\d+)P(\d+)D", flags=re.IGNORECASE)
_OFF, _ON = ("", "0", "false", "off"), ("1", "true", "on")


class TwinOptions(BaseModel):
    """A twin deployment: hardware, model, parallelism, engine knobs and how to run it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hardware: str = Field("H200", description="Accelerator, e.g. H200, B200, GB200, MI355X.")
    model: str = Field("gpt-oss-120b", description="Model, e.g. gpt-oss-120b, DeepSeek-R1.")
    tp: int = Field(1, ge=1, description="Tensor-parallel GPUs per replica.")
    ep: int = Field(1, ge=1, description="Expert parallelism: 1 (experts TP-sliced) or = tp.")
    precision: Precision = Field("native", description="Weights: native, bf16, fp8, fp4, int4.")
    kv: KvDtype = Field("bf16", description="KV-cache dtype: bf16 or fp8.")
    replicas: int = Field(1, ge=1, description="Data-parallel replicas behind the router.")
    router: Router = Field(
        "round_robin",
        description="round_robin, session (sticky on extra_body.session_id), least_loaded.",
    )
    disagg: str | None = Field(None, description="Disaggregated pools, e.g. 1P1D or 2P1D.")
    prefill_tp: int | None = Field(None, ge=1, description="TP of prefill replicas (default tp).")
    prefill_attention: Literal["auto", "dp", "tp"] = Field(
        "auto",
        description="Attention of the prefill replicas: dp (data-parallel over their ranks, "
        "experts expert-parallel: a DEP context server), tp, or auto (as the decode replicas).",
    )
    kv_link: Literal["auto", "scaleup", "network"] = Field(
        "auto",
        description="KV transfer path in disagg mode: auto (scale-up when the deployment fits "
        "one scale-up domain, else the network), scaleup or network.",
    )
    max_num_seqs: int = Field(512, ge=1, description="Scheduler seat limit per replica.")
    max_batched_tokens: int = Field(8192, ge=1, description="Token budget per step.")
    block_size: int = Field(16, ge=1, description="KV block size in tokens.")
    prefix_caching: bool = Field(True, description="Reuse cached prefix blocks (1 or 0).")
    prefix_cache: str = Field(
        "kv",
        description="Prefix-cache capacity: kv (free KV memory), unlimited (never evicts) "
        "or a token count.",
    )
    gpu_memory_utilization: float = Field(
        0.90, gt=0, le=1, description="Fraction of HBM for weights + KV."
    )
    hbm_efficiency: float = Field(
        0.80, gt=0, le=1, description="Achievable fraction of HBM bandwidth."
    )
    framework: str = Field(
        "vllm",
        description="Serving engine profile: vllm, sglang, trt, atom (a dynamo- or mori- "
        "prefix keeps the engine underneath behind that serving stack; bench- runs it under an "
        "offline driver in its own process, as trtllm-bench does).",
    )
    dp_attention: bool = Field(
        False,
        description="Attention data-parallel over the tp ranks with experts expert-parallel "
        "over them (wide EP; needs a MoE model).",
    )
    pp: int = Field(1, ge=1, description="Pipeline-parallel stages of tp GPUs each.")
    micro_batches: int | None = Field(
        None,
        ge=1,
        description="Batches a pipeline-parallel replica keeps in flight, each a full pass "
        "through its stages (default: pp, one a stage, as TensorRT-LLM, vLLM and SGLang run "
        "pipelines; 1: one batch at a time).",
    )
    expert_skew: float | None = Field(
        None, ge=1, description="Tokens on the busiest expert-parallel rank / mean (>= 1)."
    )
    expert_concentration: float | None = Field(
        None,
        ge=0,
        le=3,
        description="Routed experts' popularity falling as rank^-a for this traffic (0 = "
        "uniform routing; default: the profile book's fitted value); TP-sliced experts only.",
    )
    mtp: int = Field(0, ge=0, description="Speculative / MTP draft tokens per step.")
    batch_wait_iters: int = Field(
        0,
        ge=0,
        description="TensorRT-LLM batch_wait_timeout_iters: while decodes run, hold new prompts "
        "for up to this many steps (0 = off, the library default).",
    )
    batch_wait_ratio: float = Field(
        0.0,
        ge=0,
        le=1,
        description="TensorRT-LLM batch_wait_max_tokens_ratio: stop holding once the step's "
        "tokens reach this fraction of max_batched_tokens.",
    )
    adp_balance_iters: int = Field(
        0,
        ge=0,
        description="TensorRT-LLM attention_dp_config enable_balance with timeout_iters: with "
        "dp_attention, hold new prompts for up to this many steps until every rank has one "
        "(0 = off, the library default).",
    )
    kv_free_fraction: float | None = Field(
        None,
        gt=0,
        le=1,
        description="TensorRT-LLM kv_cache_config.free_gpu_memory_fraction: the KV pool is this "
        "fraction of the memory the weights and activations leave (default: the framework "
        "profile's rule).",
    )
    recv_interval: int = Field(
        1,
        ge=1,
        description="SGLang --scheduler-recv-interval: take in new requests only every N "
        "decode steps (and after every prefill); 1 = every step, the default.",
    )
    mtp_al: float | None = Field(
        None,
        ge=1,
        description="Declared acceptance length (tokens per verify step, 1..mtp+1); default "
        "the built-in DeepSeek-style curve.",
    )
    loop_after: float | None = Field(
        None,
        ge=0,
        description="Mean output tokens before a forced-length output (ignore_eos) repeats "
        "itself, all drafts then accepted (0 = never: text that ends at EOS; default: the "
        "profile book's fitted value); the default acceptance curve only.",
    )
    fp4_act: Switch = Field(
        "auto",
        description="FP4 activations for 4-bit weights: auto (on for precision=fp4 where the "
        "hardware has FP4 tensor cores), 1 or 0.",
    )
    chunked_prefill: Switch = Field(
        "auto",
        description="Chunked prefill (TensorRT-LLM's enable_chunked_prefill, vLLM's and "
        "SGLang's chunked prefill): auto (the framework's default: on for vllm, sglang and atom, "
        "off for trt), 1 or 0. Unchunked, a prompt must fit the step's token budget beside "
        "the decoding sequences.",
    )
    async_scheduling: Switch = Field(
        "auto",
        description="The engine's async scheduling, which builds the next step on the host "
        "while this one computes (vLLM's --async-scheduling, on by default from vLLM 0.14.0; "
        "SGLang's overlap scheduler; TensorRT-LLM's overlap scheduler): auto (on), 1 or 0. "
        "Off, every step also waits for the host's work per scheduled request "
        "(the profile's sync_seq_overhead_s).",
    )
    kernels: KernelPath = Field(
        "tuned",
        description="The kernel path for the model's quantised weights on this stack: tuned, "
        "or untuned (declared, for example a format whose kernels the engine has not yet "
        "optimised for this model; costs the fitted untuned_kernel_scale).",
    )
    software_date: str | None = Field(
        None,
        description="The day the serving software is from (YYYY-MM-DD): the vendor's fitted "
        "software trend over its calibrated dates, and a young port's slowdown in the model's "
        "first weeks (default: the fitted factors as they are, a mature port).",
    )
    catalogue: tuple[str, ...] = Field((), description="User hardware/model YAML (repeatable).")
    executor: Literal["driver", "fast"] = Field(
        "driver",
        description="driver: the asyncio client in virtual time; fast: the same plans "
        "simulated straight on the event engine (what `scoville simulate` uses). Agentic "
        "replay runs its lanes on the event engine unless executor=driver is given.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> TwinOptions:
        if self.ep not in (1, self.tp):
            raise ValueError(f"Option ep={self.ep} must be 1 or equal to tp={self.tp}.")
        if self.disagg is not None and self.disagg not in _ON and not _pools(self.disagg):
            raise ValueError(
                f"Option disagg={self.disagg!r} must look like 1P1D (prefill and decode replicas)."
            )
        if self.micro_batches is not None and self.micro_batches > self.pp:
            raise ValueError(
                f"Option micro_batches={self.micro_batches} must be at most pp={self.pp} "
                "(one batch in flight a stage)."
            )
        if self.mtp_al is not None and (self.mtp == 0 or self.mtp_al > self.mtp + 1):
            raise ValueError(
                f"Option mtp_al={self.mtp_al:g} must be between 1 and mtp+1 = {self.mtp + 1} "
                "(set mtp first)."
            )
        if self.prefill_attention != "auto" and self.disagg is None:
            raise ValueError(
                f"Option prefill_attention={self.prefill_attention} describes the prefill pool "
                "of a disaggregated deployment: set disagg (e.g. 1P1D)."
            )
        if self.adp_balance_iters and not self.dp_attention:
            raise ValueError(
                f"Option adp_balance_iters={self.adp_balance_iters} balances prompts over "
                "attention-DP ranks: set dp_attention=1."
            )
        if self.kv_free_fraction is not None and "gpu_memory_utilization" in self.model_fields_set:
            raise ValueError(
                "Options gpu_memory_utilization (a fraction of device memory) and "
                "kv_free_fraction (a fraction of what the weights leave) both size the KV pool: "
                "set one."
            )
        if self.software_date is not None:
            try:
                if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", self.software_date):
                    raise ValueError
                date.fromisoformat(self.software_date)
            except ValueError:
                raise ValueError(
                    f"Option software_date={self.software_date!r} must be a date, YYYY-MM-DD."
                ) from None
        pc = self.prefix_cache
        if pc not in ("kv", "unlimited") and not pc.isdigit():
            raise ValueError(f"Option prefix_cache={pc!r}: use kv, unlimited or a token count.")
        return self

    @classmethod
    def build(cls, **values: Any) -> TwinOptions:
        """Validated options; a bad value raises `TargetError` naming the option."""
        if values.get("disagg") in _OFF:
            values["disagg"] = None
        try:
            return cls(**values)
        except ValidationError as e:
            err = e.errors()[0]
            cause = (err.get("ctx") or {}).get("error")
            where = ".".join(str(p) for p in err["loc"])
            raise bad_url(str(cause) if cause else f"Option {where}: {err['msg']}.") from None

    @classmethod
    def parse_url(cls, url: str) -> TwinOptions:
        """`twin:HW/MODEL?opts` -> options; unknown or malformed options raise TargetError."""
        m = _URL.match(url.strip())
        if not m:
            raise bad_url(f"Cannot read twin URL {url!r}.")
        pairs = parse_qsl(m.group("query") or "", keep_blank_values=True)
        values: dict[str, Any] = {"hardware": m.group("hw"), "model": m.group("model")}
        values["catalogue"] = tuple(v for k, v in pairs if k == "catalogue")
        opts = {k: v for k, v in pairs if k != "catalogue"}
        unknown = sorted(set(opts) - set(url_options()))
        if unknown:
            raise bad_url(f"Unknown twin option(s) {', '.join(unknown)}.")
        for key, raw in opts.items():
            values[key] = _from_text(key, raw)
        return cls.build(**values)

    def url(self) -> str:
        """The canonical `twin:` URL: options that differ from their defaults, in field order."""
        q: list[tuple[str, str]] = []
        for key in url_options():
            value, default = getattr(self, key), TwinOptions.model_fields[key].default
            if value != default:
                q.append((key, str(int(value)) if isinstance(value, bool) else str(value)))
        q += [("catalogue", p) for p in self.catalogue]
        return f"twin:{self.hardware}/{self.model}" + (f"?{urlencode(q)}" if q else "")

    def config(self, book: ProfileBook | None = None) -> TwinConfig:
        """The engine's configuration (catalogue entries looked up; unknown names raise);
        `book` replaces the shipped framework profiles (what `twin fit` tries)."""
        cat = load_catalogue(list(self.catalogue))
        engine = EngineConfig(
            max_num_seqs=self.max_num_seqs,
            max_num_batched_tokens=self.max_batched_tokens,
            block_size_tokens=self.block_size,
            prefix_caching=self.prefix_caching,
            prefix_cache_tokens=_prefix_cache_tokens(self.prefix_cache),
        )
        eff = replace(
            Efficiency(),
            gpu_memory_utilization=self.gpu_memory_utilization,
            hbm_bw=self.hbm_efficiency,
        )
        cfg = TwinConfig(
            hardware=cat.get_hardware(self.hardware),
            model=cat.get_model(self.model),
            parallel=Parallel(self.tp, ep=self.ep, precision=self.precision, kv_dtype=self.kv),
            replicas=self.replicas,
            router=self.router,
            engine=engine,
            efficiency=eff,
            disagg=self._disagg(),
            labels={"url": self.url()},
        )
        return apply_deploy_options(cfg, self._deployment(), book, explicit=self._explicit())

    def _deployment(self) -> Deployment:
        """The deployment choices `twin.deploy` applies (its fields are options here), as
        validated here."""
        return Deployment(**{f.name: getattr(self, f.name) for f in fields(Deployment)})

    def _explicit(self) -> frozenset[str]:
        """Options the user set (a framework profile's defaults do not override them)."""
        return frozenset(self.model_fields_set)

    def _disagg(self) -> DisaggConfig | None:
        if self.disagg is None:
            return None
        p, d = (1, 1) if self.disagg in _ON else _pools(self.disagg) or (1, 1)
        dp = None if self.prefill_attention == "auto" else self.prefill_attention == "dp"
        return DisaggConfig(p, d, self.prefill_tp, self.kv_link, prefill_dp_attention=dp)


def url_options() -> list[str]:
    """Option names a URL query may carry (hardware and model are the URL's path)."""
    return [k for k in TwinOptions.model_fields if k not in ("hardware", "model", "catalogue")]


def option_help(name: str) -> str:
    """The help text of one option: its field description."""
    return TwinOptions.model_fields[name].description or ""


def bad_url(msg: str) -> TargetError:
    fields = TwinOptions.model_fields
    opts = "; ".join(f"{k}: {fields[k].description} (default {fields[k].default})" for k in fields)
    return TargetError(
        f"{msg} Twin URLs look like twin:HARDWARE/MODEL?opt=value&... (for example "
        f"twin:H200/gpt-oss-120b?tp=1&precision=fp4). Options: {opts}."
    )


def _pools(text: str) -> tuple[int, int] | None:
    m = _DISAGG.fullmatch(text)
    if m and int(m.group(1)) > 0 and int(m.group(2)) > 0:
        return int(m.group(1)), int(m.group(2))
    return None


def _prefix_cache_tokens(text: str) -> int | None:
    return None if text == "kv" else -1 if text == "unlimited" else int(text)


def _from_text(key: str, raw: str) -> Any:
    """A URL option's text as its field's type, with a message that names the option."""
    field = TwinOptions.model_fields[key]
    ann = field.annotation
    if ann in (int, int | None):
        low = min((m.ge for m in field.metadata if hasattr(m, "ge")), default=1)
        if not raw.isdigit() or int(raw) < low:
            word = "a positive integer" if low == 1 else f"an integer >= {low}"
            raise bad_url(f"Option {key}={raw!r} must be {word}.")
        return int(raw)
    if ann in (float, float | None):
        try:
            return float(raw)
        except ValueError:
            raise bad_url(f"Option {key}={raw!r} must be a number.") from None
    allowed = ("0", "1") if ann is bool else get_args(ann) if get_origin(ann) is Literal else ()
    if allowed and raw not in allowed:
        raise bad_url(f"Option {key}={raw!r} must be one of {', '.join(allowed)}.")
    return raw == "1" if ann is bool else raw
