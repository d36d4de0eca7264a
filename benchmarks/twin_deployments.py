"""The twin on the deployments headline numbers are published for: TP1-8 at batch 1 on H200,
wide EP inside an NVL72 vs across HGX B200 nodes, disaggregated vs aggregated serving on 16
B200, FP4 activations (B300 vs B200), and a refused configuration (TP32 on an 8-GPU HGX).

Run: PYTHONPATH=src python benchmarks/twin_deployments.py
Prints one line per comparison; no figure is asserted (the tests check the mechanisms).
"""

from __future__ import annotations

from scoville.errors import TargetError
from scoville.twin.costmodel import StepBatch
from scoville.twin.frontier import FrontierRow, frontier_rows
from scoville.twin.simulate import sweep
from scoville.twin.target import parse_twin_url

R1 = "DeepSeek-R1?precision=fp4&kv=fp8&framework=trt"


def _row(url: str, isl: int, osl: int, conc: int) -> FrontierRow:
    cfg = parse_twin_url(url)
    pts = sweep(cfg, isl, osl, [conc], max(4 * conc, 8), range_ratio=0.8)
    return frontier_rows(pts)[-1]


def _fmt(r: FrontierRow) -> str:
    return (
        f"{r.tput_per_gpu:,.0f} tok/s/GPU, TTFT {r.median_ttft_s * 1e3:,.0f} ms, "
        f"TPOT {r.median_tpot_s * 1e3:.2f} ms"
    )


def main() -> None:
    b = StepBatch(n_decode=1, decode_ctx_tokens=1024, decode_ctx_swa_tokens=128, n_sampled=1)
    steps = []
    for tp in (1, 2, 4, 8):
        sm = parse_twin_url(f"twin:H200/gpt-oss-120b?tp={tp}").step_model()
        steps.append(f"TP{tp} {sm.cost(b).total_s * 1e3:.2f}")
    print("H200 gpt-oss-120b batch-1 decode step (ms):", ", ".join(steps))
    try:
        parse_twin_url("twin:B200/DeepSeek-R1?tp=32&ep=32").step_model()
    except TargetError as e:
        print("B200 tp=32:", str(e).split(". ")[0])
    for hw in ("B200", "GB200"):
        r = _row(f"twin:{hw}/{R1}&tp=32&dp_attention=1&mtp=3", 1024, 1024, 512)
        print(f"{hw} DeepSeek-R1 FP4 1k/1k c512, decode DEP32 + MTP3: {_fmt(r)}")
    for conc in (64, 256):
        agg = _row(f"twin:B200/{R1}&tp=8&dp_attention=1&replicas=2", 8192, 1024, conc)
        dis = _row(f"twin:B200/{R1}&tp=8&dp_attention=1&disagg=1P1D", 8192, 1024, conc)
        print(f"16 x B200 R1 FP4 8k/1k c{conc}: aggregated {_fmt(agg)} | 1P1D {_fmt(dis)}")
    for link in ("network",):
        r = _row(f"twin:B200/{R1}&tp=8&dp_attention=1&disagg=1P1D&kv_link={link}", 8192, 1024, 256)
        print(f"  1P1D KV over {link} (B200): {_fmt(r)}")
    r = _row(f"twin:GB200/{R1}&tp=8&dp_attention=1&disagg=1P1D&kv_link=scaleup", 8192, 1024, 256)
    print(f"  1P1D KV over NVLink (GB200): {_fmt(r)}")
    for hw in ("B200", "B300"):
        r = _row(f"twin:{hw}/Llama-3.1-70B?precision=fp4&kv=fp8&framework=trt", 1024, 1024, 64)
        print(f"{hw} Llama-3.1-70B FP4 (W4A4 where FP4 tensor cores exist) 1k/1k c64: {_fmt(r)}")


if __name__ == "__main__":
    main()
