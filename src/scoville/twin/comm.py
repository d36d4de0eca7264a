"""Collectives over the fabric a deployment actually has: a scale-up domain (NVLink switch,
xGMI mesh, TPU ICI) of a fixed number of accelerators, and the scale-out network beyond it.

`Fabric.of(hw, eff)` reads the catalogue's per-system figures; `allreduce_s` and `alltoall_s`
price one collective over `n` ranks (alpha + bytes / bandwidth, where alpha grows with log2 n
and the bandwidth is the slowest link the group spans). `check_group` refuses a group that
cannot exist on the system (TP32 on an 8-GPU HGX) with a message naming the domain.
`StepCollectives` is what one engine step of a deployment crosses: its TP all-reduces and its
MoE dispatch/combine, priced for a step's tokens (the step cost model adds it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scoville.errors import TargetError
from scoville.twin.catalogue import Hardware, ModelArch
from scoville.twin.layout import Efficiency, Parallel


@dataclass(frozen=True, slots=True)
class Link:
    """One tier of the fabric: achievable bytes/s per GPU per direction and collective latency
    `latency_s + latency_per_doubling_s * log2(n)` for a group of n ranks."""

    name: str
    bytes_per_s: float
    latency_s: float
    latency_per_doubling_s: float

    def alpha_s(self, n: int) -> float:
        return self.latency_s + self.latency_per_doubling_s * math.log2(max(n, 1))


@dataclass(frozen=True, slots=True)
class Fabric:
    """Scale-up domain of `domain_gpus` accelerators, and the network beyond it."""

    domain_gpus: int
    domain_name: str
    scaleup: Link
    scaleout: Link

    @staticmethod
    def of(hw: Hardware, link_efficiency: float, latency_scale: float = 1.0) -> Fabric:
        f = hw.fabric
        up = Link(
            hw.scaleup_link or "scale-up",
            float(hw.scaleup_gb_s_bidir or 0.0) / 2.0 * 1e9 * link_efficiency,
            f.scaleup_latency_us * 1e-6 * latency_scale,
            f.scaleup_latency_per_doubling_us * 1e-6 * latency_scale,
        )
        out = Link(
            f.scaleout_link,
            f.scaleout_gb_s * 1e9 * link_efficiency,
            f.scaleout_latency_us * 1e-6 * latency_scale,
            f.scaleout_latency_per_doubling_us * 1e-6 * latency_scale,
        )
        return Fabric(f.scaleup_gpus, f.domain_name or f"{f.scaleup_gpus}-GPU domain", up, out)

    def link_for(self, n: int) -> Link:
        """The link a group of n ranks is limited by: scale-up inside one domain, else the
        network (a group that spans domains moves part of its bytes over the slower tier)."""
        return self.scaleup if n <= self.domain_gpus else self.scaleout

    def check_group(self, n: int, what: str, hw_name: str) -> None:
        """Refuse a tensor-parallel group larger than the scale-up domain: no framework runs
        TP all-reduces across the scale-out network, and the configuration does not exist."""
        if n > self.domain_gpus:
            raise TargetError(
                f"{what}={n} does not exist on {hw_name}: its scale-up domain ({self.domain_name}) "
                f"holds {self.domain_gpus} accelerators, and tensor parallelism does not span the "
                f"scale-out network ({self.scaleout.name}). Use at most {what}={self.domain_gpus}, "
                "data-parallel attention with expert parallelism (dp_attention=1), pipeline "
                "parallelism (pp), or replicas."
            )


def allreduce_s(nbytes: float, n: int, link: Link) -> float:
    """Ring/one-shot all-reduce of `nbytes` per rank over n ranks: 2 (n-1)/n of the buffer
    crosses each rank's link, plus the group's latency."""
    if n <= 1:
        return 0.0
    return link.alpha_s(n) + nbytes * 2.0 * (n - 1) / n / link.bytes_per_s


def alltoall_s(nbytes_per_rank: float, n: int, link: Link, latency_s: float) -> float:
    """One all-to-all (MoE dispatch or combine): (n-1)/n of each rank's bytes leave it."""
    if n <= 1:
        return 0.0
    return latency_s + nbytes_per_rank * (n - 1) / n / link.bytes_per_s


@dataclass(frozen=True, slots=True)
class StepCollectives:
    """The collectives of one engine step: `n_allreduce` TP all-reduces (two a layer under
    attention TP, whether the experts are TP-sliced or expert-parallel) and `n_alltoall` MoE
    dispatch/combine pairs among `ep` ranks under attention DP; none under TP1 without EP.
    `dp` > 1 is attention data parallelism, where the busiest rank sends its own tokens."""

    tp: int
    ep: int
    dp: int
    hidden_size: int
    experts_per_token: int
    expert_skew: float
    n_allreduce: int
    n_alltoall: int
    tp_link: Link
    ep_link: Link
    allreduce_alpha_s: float
    alltoall_alpha_s: float

    @staticmethod
    def of(
        fabric: Fabric, model: ModelArch, n_moe_layers: int, par: Parallel, eff: Efficiency, ep: int
    ) -> StepCollectives:
        tp_link, ep_link = fabric.link_for(par.tp), fabric.link_for(ep)
        # under attention TP every rank holds every token after the attention all-reduce, so an
        # expert-parallel MoE layer needs no dispatch: each rank runs its own experts on all the
        # tokens and the layer's second all-reduce sums their outputs (TensorRT-LLM, SGLang
        # without DeepEP and vLLM at DP 1 alike); only attention DP exchanges tokens
        n_allreduce = 0 if par.dp_attention or par.tp == 1 else 2 * model.num_layers
        lat = eff.allreduce_latency_s
        return StepCollectives(
            tp=par.tp,
            ep=ep,
            dp=par.dp,
            hidden_size=model.hidden_size,
            experts_per_token=model.experts_per_token,
            expert_skew=par.expert_skew,
            n_allreduce=n_allreduce,
            n_alltoall=n_moe_layers if ep > 1 and par.dp_attention else 0,
            tp_link=tp_link,
            ep_link=ep_link,
            allreduce_alpha_s=tp_link.alpha_s(par.tp) if lat is None else lat,
            alltoall_alpha_s=(
                eff.alltoall_latency_s * eff.collective_latency_scale
                if ep <= fabric.domain_gpus
                else ep_link.alpha_s(ep)
            ),
        )

    def step_s(self, tokens: int, rank_tokens: float = 0.0) -> float:
        """Time of the step's collectives for `tokens` rows (`rank_tokens` on the busiest
        attention-DP rank)."""
        if self.n_allreduce == 0 and self.n_alltoall == 0:
            return 0.0
        tp = self.tp
        h = self.hidden_size
        t = 0.0
        if self.n_allreduce:
            # ring: 2(n-1)/n of the BF16 buffer crosses each link
            nbytes = tokens * h * 2.0
            bw_s = nbytes * 2.0 * (tp - 1) / tp / self.tp_link.bytes_per_s
            t = self.n_allreduce * (self.allreduce_alpha_s + bw_s)
        if self.n_alltoall:
            k = self.experts_per_token
            # dispatch FP8 (1 B) + combine BF16 (2 B) of this rank's tokens to other ranks,
            # the busiest rank receiving expert_skew x the mean
            per_rank = tokens / self.ep * k * h * 3.0 * self.expert_skew
            if self.dp > 1:  # data-parallel attention: the busiest rank sends its own tokens
                per_rank = max(per_rank, rank_tokens * k * h * 3.0)
            t += self.n_alltoall * (
                2 * self.alltoall_alpha_s + alltoall_s(per_rank, self.ep, self.ep_link, 0.0)
            )
        return t
