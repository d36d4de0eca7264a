"""The twin's catalogues: accelerators and model architectures, each entry with its source.

Shipped entries come from `scoville/data/twin/{hardware,models}.yaml` (built from the reference
CSVs copied beside them); user YAML files add or derive entries (`base: H200` plus overrides).
Validation happens here, at the I/O boundary; the cost model reads the validated entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from scoville.errors import DataError, TargetError

# a day as the data files write it (a release, a run, a calibrated date): YYYY-MM-DD
DAY_PATTERN = r"^20\d\d-\d\d-\d\d$"

WeightFormat = Literal["bf16", "fp16", "fp8", "mxfp4", "nvfp4", "int4_g32", "int4_g128"]

# Stored bits per weight, scales included: MX formats carry one E8M0 scale per 32 elements,
# NVFP4 one FP8 scale per 16, INT4 one BF16 scale per group; FP8 128x128 block scales add
# 32 bits per 16,384 weights (negligible, kept for exactness).
BITS_PER_WEIGHT: dict[str, float] = {
    "bf16": 16.0,
    "fp16": 16.0,
    "fp8": 8.0 + 32.0 / 16384.0,
    "mxfp4": 4.0 + 8.0 / 32.0,
    "nvfp4": 4.0 + 8.0 / 16.0,
    "int4_g32": 4.0 + 16.0 / 32.0,
    "int4_g128": 4.0 + 16.0 / 128.0,
}


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DenseTflops(_Entry):
    bf16: float | None = Field(None, gt=0, description="Dense BF16 tensor TFLOP/s.")
    fp8: float | None = Field(None, gt=0, description="Dense FP8 tensor TFLOP/s.")
    fp4: float | None = Field(None, gt=0, description="Dense FP4 tensor TFLOP/s.")


class FabricSpec(_Entry):
    """The scale-up domain and the network beyond it (per GPU). Latencies are those of one
    small-message collective: `latency_us + latency_per_doubling_us * log2(ranks)`."""

    scaleup_gpus: int = Field(8, ge=1, description="Accelerators in one scale-up domain.")
    domain_name: str = ""
    scaleup_latency_us: float = Field(5.0, gt=0)
    scaleup_latency_per_doubling_us: float = Field(1.5, ge=0)
    scaleout_link: str = "400 Gb/s RDMA NIC per GPU"
    scaleout_gb_s: float = Field(50.0, gt=0, description="Network GB/s per GPU per direction.")
    scaleout_latency_us: float = Field(15.0, gt=0)
    scaleout_latency_per_doubling_us: float = Field(5.0, ge=0)


class Hardware(_Entry):
    """One accelerator (per GPU / per chip / per package, as `scope` of the source says)."""

    name: str
    aliases: tuple[str, ...] = ()
    vendor: str = "unknown"
    status: str = "unknown"
    dense_tflops: DenseTflops = Field(default_factory=lambda: DenseTflops.model_validate({}))
    fp4_format: str | None = None
    hbm_gb: float | None = Field(None, gt=0, description="HBM capacity, GB (1e9 bytes).")
    hbm_tb_s: float | None = Field(None, gt=0, description="Peak HBM bandwidth, TB/s.")
    memory_reported_gb: float | None = Field(
        None,
        gt=0,
        description="Device memory as the driver reports it (nvidia-smi / rocm-smi total), GB "
        "(1e9 bytes): what a serving engine's memory fraction multiplies. Vendors quote most "
        "capacities in binary units (180 GB is 180 GiB), so this is larger than hbm_gb; "
        "absent, hbm_gb is used.",
    )
    scaleup_link: str = ""
    scaleup_gb_s_bidir: float | None = Field(
        None, gt=0, description="Scale-up link bandwidth per GPU, both directions, GB/s."
    )
    scaleup_domain: str | None = None
    fabric: FabricSpec = Field(default_factory=lambda: FabricSpec.model_validate({}))
    tdp_w: float | None = Field(None, gt=0)
    matmul_rate: float = Field(
        1.0,
        gt=0.5,
        lt=2.0,
        description="Sustained matmul rate against the family's reference part (1.0, whose rate "
        "the fitted GEMM scale stands for): max-achievable over datasheet FLOP/s, this part's "
        "over the reference's. Under dense load the clock falls to what the power limit holds.",
    )
    matmul_rate_source: str = ""
    matmul_tflops: DenseTflops = Field(
        default_factory=lambda: DenseTflops.model_validate({}),
        description="Maximum achievable dense matmul TFLOP/s by dtype, measured (the best shape, "
        "sustained clock): no GEMM of the twin's runs faster, whatever its fitted efficiency.",
    )
    matmul_tflops_source: str = ""
    power_only: bool = Field(False, description="Only power is known: cannot be simulated.")
    assumed: dict[str, str] = Field(
        default_factory=dict, description="Fields not from the source, with the assumption."
    )
    notes: str = ""
    source: str = Field(..., min_length=1, description="Where the figures come from.")

    @property
    def fp4_weight_format(self) -> WeightFormat:
        """The 4-bit float format a `precision=fp4` checkpoint for this hardware is stored in:
        the one its tensor cores name first (NVFP4 on Blackwell, MXFP4 on CDNA4), else the
        vendor's quantiser's (NVIDIA ModelOpt: NVFP4; others: MXFP4)."""
        named = (self.fp4_format or "").upper()
        if named.startswith("NVFP4"):
            return "nvfp4"
        if named.startswith("MXFP4"):
            return "mxfp4"
        return "nvfp4" if self.vendor == "NVIDIA" else "mxfp4"

    @property
    def device_memory_bytes(self) -> float:
        """Bytes the runtime sees: the reported total where known, else the quoted capacity."""
        return float(self.memory_reported_gb or self.hbm_gb or 0.0) * 1e9

    def missing_for_simulation(self) -> list[str]:
        """Fields the cost model needs that this entry lacks."""
        missing = [n for n in ("hbm_gb", "hbm_tb_s") if getattr(self, n) is None]
        if self.dense_tflops.bf16 is None and self.dense_tflops.fp8 is None:
            missing.append("dense_tflops.bf16 (or fp8)")
        return missing


class WeightFormats(_Entry):
    """How the checkpoint stores each weight group (what is read from HBM each step)."""

    attention: WeightFormat = "bf16"
    dense_mlp: WeightFormat = "bf16"
    shared_experts: WeightFormat = "bf16"
    routed_experts: WeightFormat = "bf16"
    embeddings: WeightFormat = "bf16"


class CompressedKv(_Entry):
    """Compressed / sparse attention as in DeepSeek V4 (CSA / HCA) and V3.2 (DSA: every ratio
    1, no window): every layer keeps the raw KV of the last `window_tokens` tokens; a layer of
    ratio r > 0 also stores one KV entry per r tokens (0 = window only). Layers of ratio
    `sparse_ratio` keep an indexer key per entry and read only `index_topk` entries per query
    token; the others read all of theirs. Entry sizes are catalogue facts per KV dtype (bytes
    of one stored entry, scales included), as the serving engines lay them out."""

    window_tokens: int = Field(..., ge=0, description="Raw window per layer; 0 = none.")
    compress_ratios: tuple[int, ...] = Field(..., min_length=1, description="One per layer.")
    sparse_ratio: int = Field(4, ge=1)
    index_topk: int = Field(..., ge=1)
    index_n_heads: int = Field(..., ge=1)
    index_head_dim: int = Field(..., ge=1)
    entry_bytes: dict[Literal["bf16", "fp8"], float] = Field(
        ..., description="Bytes of one stored KV entry (K = V) per KV-cache dtype."
    )
    index_entry_bytes: float = Field(..., gt=0, description="Bytes of one indexer key.")

    @model_validator(mode="after")
    def _complete(self) -> CompressedKv:
        if set(self.entry_bytes) != {"bf16", "fp8"}:
            raise ValueError("entry_bytes needs both bf16 and fp8")
        if any(r < 0 for r in self.compress_ratios):
            raise ValueError("compress_ratios must be >= 0")
        return self


class ModelArch(_Entry):
    """A model's architecture, as its config.json states it."""

    name: str
    aliases: tuple[str, ...] = ()
    hf_repo: str = ""
    attention: Literal["gqa", "mla", "csa"] = "gqa"
    num_layers: int = Field(..., ge=1)
    hidden_size: int = Field(..., ge=1)
    num_attention_heads: int = Field(..., ge=1)
    num_kv_heads: int = Field(0, ge=0)
    head_dim: int = Field(0, ge=0)
    q_lora_rank: int = Field(0, ge=0)
    kv_lora_rank: int = Field(0, ge=0)
    qk_rope_head_dim: int = Field(0, ge=0)
    qk_nope_head_dim: int = Field(0, ge=0)
    v_head_dim: int = Field(0, ge=0)
    o_lora_rank: int = Field(0, ge=0, description="Grouped low-rank output projection rank.")
    o_groups: int = Field(0, ge=0)
    compressed_kv: CompressedKv | None = None
    intermediate_size: int = Field(0, ge=0)
    moe_intermediate_size: int = Field(0, ge=0)
    num_routed_experts: int = Field(0, ge=0)
    num_shared_experts: int = Field(0, ge=0)
    experts_per_token: int = Field(0, ge=0)
    first_k_dense_layers: int = Field(0, ge=0)
    sliding_window: int = Field(0, ge=0)
    num_sliding_window_layers: int = Field(0, ge=0)
    vocab_size: int = Field(..., ge=1)
    max_position_embeddings: int = Field(..., ge=1)
    weight_formats: WeightFormats = Field(default_factory=lambda: WeightFormats.model_validate({}))
    official_total_params_b: float | None = None
    official_active_params_b: float | None = None
    native_weight_format: str = ""
    # the day the weights were published (the engines' ports of the model start then): what a
    # deployment's software date is measured from (`software.software_speed`)
    released: str | None = Field(None, pattern=DAY_PATTERN)
    released_source: str = ""
    notes: str = ""
    assumed: dict[str, str] = Field(
        default_factory=dict, description="Fields not from the source, with the assumption."
    )
    source: str = Field(..., min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> ModelArch:
        if self.released and not self.released_source:
            raise ValueError("released needs released_source (where the date is from)")
        if self.attention == "gqa" and (self.num_kv_heads < 1 or self.head_dim < 1):
            raise ValueError("GQA attention needs num_kv_heads >= 1 and head_dim >= 1")
        if self.attention == "mla" and (self.kv_lora_rank < 1 or self.qk_rope_head_dim < 1):
            raise ValueError("MLA attention needs kv_lora_rank and qk_rope_head_dim >= 1")
        if self.attention == "csa":
            self._check_csa()
        if self.compressed_kv and len(self.compressed_kv.compress_ratios) != self.num_layers:
            raise ValueError("compressed_kv.compress_ratios needs one ratio per layer")
        if self.num_routed_experts and not 1 <= self.experts_per_token <= self.num_routed_experts:
            raise ValueError("experts_per_token must be in 1..num_routed_experts")
        if self.first_k_dense_layers > self.num_layers:
            raise ValueError("first_k_dense_layers exceeds num_layers")
        if self.num_sliding_window_layers > self.num_layers:
            raise ValueError("num_sliding_window_layers exceeds num_layers")
        if self.num_sliding_window_layers and self.sliding_window < 1:
            raise ValueError("sliding-window layers need sliding_window >= 1")
        if self.num_routed_experts == 0 and self.first_k_dense_layers < self.num_layers:
            raise ValueError("a dense model must have first_k_dense_layers == num_layers")
        return self

    def _check_csa(self) -> None:
        ckv = self.compressed_kv
        if ckv is None or self.head_dim < 1 or self.num_kv_heads != 1 or not ckv.window_tokens:
            raise ValueError(
                "CSA attention needs compressed_kv with a window, head_dim and num_kv_heads 1"
            )
        if self.o_lora_rank and self.o_groups < 1:
            raise ValueError("o_lora_rank needs o_groups >= 1")

    @property
    def is_moe(self) -> bool:
        return self.num_routed_experts > 0

    @property
    def n_indexer_layers(self) -> int:
        """Layers with a sparse-attention indexer (ratio `sparse_ratio` of `compressed_kv`):
        each runs the indexer's projections, key quantisation, logits and top-k every step."""
        ckv = self.compressed_kv
        return sum(1 for r in ckv.compress_ratios if r == ckv.sparse_ratio) if ckv else 0


@dataclass
class Catalogue:
    """Hardware and models by name; lookups accept aliases, case-insensitively."""

    hardware: dict[str, Hardware] = field(default_factory=dict)
    models: dict[str, ModelArch] = field(default_factory=dict)

    def get_hardware(self, name: str) -> Hardware:
        hw = _lookup(self.hardware, name)
        if hw is None:
            raise TargetError(
                f"Unknown hardware {name!r}. Known: {', '.join(sorted(self.hardware))}. "
                "Add your own in a YAML file (see docs/design/twin.md) and pass it with "
                "--catalogue or the twin URL option catalogue=PATH."
            )
        if hw.power_only:
            raise TargetError(
                f"Hardware {hw.name!r} is power-only in the catalogue (no compute or memory "
                "figures are published), so it cannot be simulated. Use a derived entry "
                f"(`base: {hw.name}` with hbm_gb, hbm_tb_s, dense_tflops) in a user YAML."
            )
        missing = hw.missing_for_simulation()
        if missing:
            raise TargetError(
                f"Hardware {hw.name!r} lacks {', '.join(missing)}; add them in a user YAML "
                f"entry with `base: {hw.name}`."
            )
        return hw

    def get_model(self, name: str) -> ModelArch:
        m = _lookup(self.models, name)
        if m is None:
            raise TargetError(
                f"Unknown model {name!r}. Known: {', '.join(sorted(self.models))}. "
                "Add your own architecture in a YAML file (see docs/design/twin.md)."
            )
        return m


def _norm(name: str) -> str:
    return name.strip().casefold().replace("ñ", "n")


_E = TypeVar("_E", Hardware, ModelArch)


def _lookup(table: Mapping[str, _E], name: str) -> _E | None:
    key = _norm(name)
    for entry in table.values():
        if _norm(entry.name) == key or any(_norm(a) == key for a in entry.aliases):
            return entry
    return None


@cache
def _shipped() -> Catalogue:
    """The shipped catalogue, parsed once per process: every twin URL resolves against it, and
    its entries are frozen, so each `load_catalogue` copies only the two tables."""
    cat = Catalogue()
    data_dir = resources.files("scoville").joinpath("data", "twin")
    for fname in ("hardware.yaml", "models.yaml"):
        text = data_dir.joinpath(fname).read_text(encoding="utf-8")
        _add_document(cat, yaml.safe_load(text), f"scoville/data/twin/{fname}")
    return cat


def load_catalogue(extra_paths: Iterable[str | Path] = ()) -> Catalogue:
    """The shipped catalogue plus each user YAML in order (later entries override earlier)."""
    shipped = _shipped()
    cat = Catalogue(dict(shipped.hardware), dict(shipped.models))
    for p in extra_paths:
        path = Path(p)
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataError(f"Catalogue file {path} does not exist; check the path.") from None
        except yaml.YAMLError as e:
            raise DataError(f"Catalogue file {path} is not valid YAML: {e}") from None
        _add_document(cat, doc, str(path))
    return cat


def _add_document(cat: Catalogue, doc: Any, where: str) -> None:
    if not isinstance(doc, dict) or not ({"hardware", "models"} & set(doc)):
        raise DataError(
            f"Catalogue file {where} must be a mapping with a `hardware:` and/or `models:` "
            "list of entries (see docs/design/twin.md for the fields)."
        )
    for key, table, cls in (
        ("hardware", cat.hardware, Hardware),
        ("models", cat.models, ModelArch),
    ):
        entries = doc.get(key) or []
        if not isinstance(entries, list):
            raise DataError(f"In {where}, `{key}:` must be a list of entries.")
        for i, raw in enumerate(entries):
            entry = _validate_entry(raw, table, cls, f"{where} {key}[{i}]")
            table[entry.name] = entry  # type: ignore[assignment]


def _validate_entry(
    raw: Any,
    table: Mapping[str, Hardware | ModelArch],
    cls: type[Hardware] | type[ModelArch],
    where: str,
) -> Hardware | ModelArch:
    if not isinstance(raw, dict) or "name" not in raw:
        raise DataError(f"{where}: each entry must be a mapping with at least a `name`.")
    data = dict(raw)
    base_name = data.pop("base", None)
    if base_name is not None:
        base = _lookup(table, str(base_name))  # type: ignore[type-var]
        if base is None:
            raise DataError(
                f"{where} ({data['name']}): base {base_name!r} is not in the catalogue. "
                f"Known: {', '.join(sorted(table))}."
            )
        merged = base.model_dump()
        for k, v in data.items():
            if isinstance(v, dict) and isinstance(merged.get(k), dict):
                merged[k] = {**merged[k], **v}
            else:
                merged[k] = v
        merged["aliases"] = data.get("aliases", ())
        if "hbm_gb" in data and "memory_reported_gb" not in data:
            merged.pop("memory_reported_gb", None)  # the base's report is of other memory
        if "source" not in data:
            merged["source"] = f"derived from {base.name} ({base.source})"
        data = merged
    try:
        return cls.model_validate(data)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in err['loc']) or 'entry'}: {err['msg']}" for err in e.errors()
        )
        raise DataError(f"{where} ({data.get('name')}): {problems}.") from None
