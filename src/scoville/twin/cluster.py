"""A served deployment in simulated time: data-parallel replicas behind a router, or
disaggregated prefill and decode pools joined by a KV transfer.

`TwinConfig` is everything that defines the twin (hardware, model, parallelism, scheduler
limits, efficiencies); `Cluster` builds the replicas on a `Kernel` and routes sequences.
Both the fast sweep path and the Server adapter drive a `Cluster`.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from scoville.errors import TargetError
from scoville.twin.catalogue import Hardware, ModelArch
from scoville.twin.comm import Fabric
from scoville.twin.costmodel import Efficiency, Parallel, SpecDecode, StepModel
from scoville.twin.engine import EngineConfig, Replica, Seq
from scoville.twin.kernel import Kernel
from scoville.twin.profiles import engine_of

Router = Literal["round_robin", "session", "least_loaded"]


@dataclass(frozen=True, slots=True)
class DisaggConfig:
    """Separate prefill and decode pools. KV moves over the scale-up link when both pools sit
    in one scale-up domain, else over the scale-out network (the hardware's `fabric`): `auto`
    picks by whether the whole deployment fits in one domain; `scaleup` beyond the domain is
    refused. Each of the prefill replica's GPUs sends its shard of the KV at once."""

    prefill_replicas: int = 1
    decode_replicas: int = 1
    prefill_tp: int | None = None  # default: the main tp
    kv_link: Literal["auto", "scaleup", "network"] = "auto"
    transfer_latency_s: float = 50e-6  # handshake + first byte, on top of the link latency
    prefill_dp_attention: bool | None = None  # None: as the decode replicas


@dataclass(frozen=True, slots=True)
class TwinConfig:
    hardware: Hardware
    model: ModelArch
    parallel: Parallel = field(default_factory=Parallel)
    replicas: int = 1
    router: Router = "round_robin"
    engine: EngineConfig = field(default_factory=EngineConfig)
    efficiency: Efficiency = field(default_factory=Efficiency)
    disagg: DisaggConfig | None = None
    labels: dict[str, str] = field(default_factory=dict)
    # settings the engine chose itself because the deployment left them unset, one line each
    # (printed by `simulate` and `twin validate`, kept in the run manifest)
    notes: tuple[str, ...] = ()

    @property
    def n_accelerators(self) -> int:
        gpus = self.parallel.gpus
        if self.disagg is None:
            return self.replicas * gpus
        d = self.disagg
        return d.prefill_replicas * (d.prefill_tp or self.parallel.tp) * self.parallel.pp + (
            d.decode_replicas * gpus
        )

    def prefill_parallel(self) -> Parallel:
        """Prefill replicas: their own TP, no speculative decoding, and the main layout's
        expert parallelism and data-parallel attention unless the deployment gives the prefill
        pool its own (a DEP context server under TP-attention decode, as TensorRT-LLM's
        low-latency recipes run; attention DP puts the experts expert-parallel)."""
        d = self.disagg
        tp = (d.prefill_tp if d is not None else None) or self.parallel.tp
        own = d.prefill_dp_attention if d is not None else None
        dp = self.parallel.dp_attention if own is None else own
        ep = tp if (self.parallel.ep > 1 or dp) else 1
        return replace(self.parallel, tp=tp, ep=ep, dp_attention=dp, spec=SpecDecode())

    def step_model(self, tp: int | None = None) -> StepModel:
        par = self.parallel if tp is None else self.prefill_parallel()
        sm = StepModel(self.hardware, self.model, par, self.efficiency)
        if sm.kv_budget_bytes_per_gpu() <= 0:
            need_gb = sm.weight_bytes_per_gpu * par.tp / 1e9
            raise TargetError(
                f"{self.model.name} weights ({need_gb:.0f} GB at this precision) leave no KV "
                f"room on {par.tp} x {self.hardware.name} "
                f"({self.hardware.device_memory_bytes / 1e9:.0f} GB each as the driver reports "
                "it); "
                "raise tp or lower the precision."
            )
        return sm


def _per_rank_limits(engine: EngineConfig, sm: StepModel) -> EngineConfig:
    """Under data-parallel attention every rank schedules its own batch: the seat limit and
    the token budget are per rank, so the replica's are dp times larger."""
    if sm.dp == 1:
        return engine
    return replace(
        engine,
        max_num_seqs=engine.max_num_seqs * sm.dp,
        max_num_batched_tokens=engine.max_num_batched_tokens * sm.dp,
    )


def micro_batches(cfg: TwinConfig, sm: StepModel, engine: EngineConfig) -> tuple[int, EngineConfig]:
    """A pipeline-parallel replica keeps one micro-batch in flight per stage (TensorRT-LLM's
    `mNumMicroBatches` = pp; vLLM's batch queue and SGLang's micro-batches likewise; the URL's
    `micro_batches` deploys another count): as many engines, each taking a full pass through
    the stages per step, sharing the replica's KV pool. The stages are taken as balanced and
    the pipeline as bubble-free: each micro-batch runs at its own pace.
    TensorRT-LLM admits max_batch_size requests per micro-batch (its capacity scheduler holds
    max_batch_size x micro-batches); the others share max_num_seqs between them. Returns the
    number of engines and each one's limits."""
    pp = sm.par.pp
    m = min(engine.micro_batches or pp, pp)
    if m <= 1:
        return 1, engine
    per_batch = engine_of(cfg.labels.get("framework", "vllm")) == "trt"
    seats = engine.max_num_seqs if per_batch else -(-engine.max_num_seqs // m)
    return m, replace(engine, max_num_seqs=seats, kv_share=engine.kv_share / m)


def seat_limit(cfg: TwinConfig) -> int:
    """Requests the deployment's engines hold at once, summed over them (the decode pool's where
    it is disaggregated): `_per_rank_limits` and `micro_batches` applied as `Cluster` applies
    them, without building it (an upper bound: the KV pool may hold fewer)."""
    sm = cfg.step_model()
    m, eng = micro_batches(cfg, sm, _per_rank_limits(cfg.engine, sm))
    replicas = cfg.replicas if cfg.disagg is None else cfg.disagg.decode_replicas
    return eng.max_num_seqs * m * replicas


def _engines(
    name: str, sm: StepModel, kernel: Kernel, engine: EngineConfig, cfg: TwinConfig, **kw: Any
) -> list[Replica]:
    """One replica's engines: itself, or its pipeline's micro-batches (`micro_batches`)."""
    m, eng = micro_batches(cfg, sm, engine)
    if m == 1:
        return [Replica(name, sm, kernel, eng, **kw)]
    return [Replica(f"{name}m{j}", sm, kernel, eng, **kw) for j in range(m)]


def _kv_path(cfg: TwinConfig) -> tuple[float, float]:
    """(bytes/s, latency s) of one sequence's KV hand-off from a prefill to a decode replica."""
    d = cfg.disagg
    assert d is not None
    fabric = Fabric.of(cfg.hardware, cfg.efficiency.link, cfg.efficiency.collective_latency_scale)
    fits = cfg.n_accelerators <= fabric.domain_gpus
    if d.kv_link == "scaleup" and not fits:
        raise TargetError(
            f"kv_link=scaleup: the deployment's {cfg.n_accelerators} accelerators do not fit "
            f"in one scale-up domain of {cfg.hardware.name} ({fabric.domain_name}, "
            f"{fabric.domain_gpus}); KV must cross the network (kv_link=network or auto)."
        )
    link = (
        fabric.scaleup
        if d.kv_link == "scaleup" or (d.kv_link == "auto" and fits)
        else (fabric.scaleout)
    )
    senders = (d.prefill_tp or cfg.parallel.tp) * cfg.parallel.pp
    return link.bytes_per_s * senders, d.transfer_latency_s + link.alpha_s(2)


class Cluster:
    """Routes sequences to replicas; in disaggregated mode hands prefilled sequences over."""

    def __init__(self, cfg: TwinConfig, kernel: Kernel) -> None:
        self.cfg, self.kernel = cfg, kernel
        self._rr = 0
        self.prefill: list[Replica] = []
        self.decode: list[Replica] = []
        if cfg.disagg is None:
            if cfg.replicas < 1:
                raise TargetError("replicas must be >= 1.")
            sm = cfg.step_model()
            eng = _per_rank_limits(cfg.engine, sm)
            self.replicas = [
                r for i in range(cfg.replicas) for r in _engines(f"r{i}", sm, kernel, eng, cfg)
            ]
            self.entry = self.replicas
        else:
            d = cfg.disagg
            sm_p = cfg.step_model(d.prefill_tp or cfg.parallel.tp)
            sm_d = cfg.step_model()
            eng_p = _per_rank_limits(cfg.engine, sm_p)
            eng_d = _per_rank_limits(cfg.engine, sm_d)
            self.prefill = [
                r
                for i in range(d.prefill_replicas)
                for r in _engines(
                    f"p{i}", sm_p, kernel, eng_p, cfg, role="prefill", on_prefilled=self._handoff
                )
            ]
            self.decode = [
                r
                for i in range(d.decode_replicas)
                for r in _engines(f"d{i}", sm_d, kernel, eng_d, cfg, role="decode")
            ]
            self.replicas = self.prefill + self.decode
            self.entry = self.prefill
            self._kv_model = sm_d
            self._transfer_bytes_per_s, self._transfer_latency_s = _kv_path(cfg)

    def submit(self, seq: Seq, t_ns: int) -> None:
        """A request arrives at the front end; the router and the engine see it once the front
        end has parsed and tokenized it (`EngineConfig.frontend_ns`)."""
        delay = self.cfg.engine.frontend_ns(seq.prompt_tokens)
        # a request no replica could hold is refused at once (the caller sees the error now,
        # and the replica charges the validation time itself)
        if delay <= 0 or self.entry[0].refuses(seq):
            self._route(self.entry, seq).submit(seq, t_ns)
            return
        self.kernel.schedule(t_ns + delay, lambda t: self._route(self.entry, seq).submit(seq, t))

    def _route(self, pool: list[Replica], seq: Seq) -> Replica:
        if len(pool) == 1:
            return pool[0]
        router = self.cfg.router
        if router == "session" and seq.session is not None:
            return pool[zlib.crc32(seq.session.encode()) % len(pool)]
        if router == "least_loaded":
            return min(pool, key=Replica.load)
        self._rr += 1
        return pool[(self._rr - 1) % len(pool)]

    def _handoff(self, seq: Seq, t_ns: int) -> None:
        """Prefill finished on a prefill replica: move its KV, then queue it for decode."""
        d = self.cfg.disagg
        assert d is not None
        nbytes = self._kv_model.kv_bytes_per_seq(seq.prompt_tokens + seq.emitted - 1)
        dt_s = self._transfer_latency_s + nbytes / self._transfer_bytes_per_s
        target = min(self.decode, key=Replica.load)
        seq.ctx_target = seq.prompt_tokens + seq.emitted
        self.kernel.schedule(t_ns + int(dt_s * 1e9), lambda t: target.submit(seq, t))

    def point_extras(self) -> dict[str, Any]:
        """Bottleneck shares of busy time and KV occupancy, summed over replicas."""
        busy = sum(r.stats.busy_s for r in self.replicas)
        parts = {
            "compute": sum(r.stats.compute_s for r in self.replicas),
            "memory": sum(r.stats.memory_s for r in self.replicas),
            "comm": sum(r.stats.comm_s for r in self.replicas),
            "overhead": sum(r.stats.overhead_s for r in self.replicas),
        }
        shares = {k: (v / busy if busy > 0 else 0.0) for k, v in parts.items()}
        occ = sum(r.stats.kv_occupancy_s for r in self.replicas)
        queries = sum(r.prefix.query_tokens for r in self.replicas)
        hits = sum(r.prefix.hit_tokens for r in self.replicas)
        return {
            "bottleneck": max(shares, key=lambda k: shares[k]) if busy > 0 else "idle",
            **{f"busy_share_{k}": v for k, v in shares.items()},
            "kv_occupancy_mean": occ / busy if busy > 0 else 0.0,
            "kv_occupancy_max": max(r.stats.kv_occupancy_max for r in self.replicas),
            "kv_capacity_tokens": sum(r.kv_capacity for r in self.decode or self.replicas),
            "preemptions": sum(r.stats.preemptions for r in self.replicas),
            "prefix_hit_rate": hits / queries if queries else 0.0,
        }
