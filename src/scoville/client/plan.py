"""Turn a spec's sweep into driver plans: one `PointPlan` per concurrency or rate.

Each point gets its own seeded prompts (warmup first, then measured), so no prompt repeats
across points; open-loop points also get seeded gamma/Poisson send times.
"""

from __future__ import annotations

from scoville.client.driver import PointPlan
from scoville.client.seam import GenerateRequest
from scoville.errors import SpecError
from scoville.spec.limits import MAX_PROMPT_TEXT_TOKENS
from scoville.spec.model import MARGIN_CAP_REQUESTS, BenchmarkSpec
from scoville.workload.arrivals import arrival_offsets_ns
from scoville.workload.fixed import Prompt, build_prompts
from scoville.workload.tokenizers import Tokenizer


def to_request(prompt: Prompt, request_id: str, spec: BenchmarkSpec) -> GenerateRequest:
    api = spec.target.api
    return GenerateRequest(
        request_id=request_id,
        api=api,
        input_tokens=prompt.input_tokens,
        max_tokens=prompt.output_tokens,
        prompt=prompt.text if api == "completions" else None,
        messages=({"role": "user", "content": prompt.text},) if api == "chat" else None,
        ignore_eos=spec.target.ignore_eos,
        min_tokens=prompt.output_tokens if spec.target.ignore_eos else None,
    )


def length_requests(
    n: int,
    isl_tokens: int,
    osl_tokens: int,
    range_ratio: float = 1.0,
    seed: int = 0,
    tag: str = "",
) -> list[GenerateRequest]:
    """`n` completions requests that carry lengths only (for targets that never read the
    text, such as the twin), drawn as `build_prompts` draws them; ids are `{tag}{i}`."""
    prompts = build_prompts(None, n, isl_tokens, osl_tokens, range_ratio, seed)
    return [
        GenerateRequest(f"{tag}{i}", "completions", p.input_tokens, p.output_tokens, prompt="")
        for i, p in enumerate(prompts)
    ]


def rate_point_sizes(spec: BenchmarkSpec, rate_per_s: float) -> tuple[int, int]:
    """(measured, warmup) requests of an open-loop point: about 10 s of arrivals by default."""
    n = spec.load.requests_per_point or max(10, round(10 * rate_per_s))
    if spec.load.target_margin is not None and spec.load.requests_per_point is None:
        n = max(n, MARGIN_CAP_REQUESTS)  # the cap: the point stops once the margin is reached
    w = (
        spec.load.warmup_requests
        if spec.load.warmup_requests is not None
        else max(1, round(2 * rate_per_s))
    )
    return n, w


def _requests(
    spec: BenchmarkSpec,
    tokenizer: Tokenizer | None,
    point_id: str,
    count: int,
    seed: int,
    overhead_tokens: int,
    salt: str,
) -> list[GenerateRequest]:
    shape = spec.shape
    prompts = build_prompts(
        tokenizer,
        count,
        shape.isl_tokens,
        shape.osl_tokens,
        shape.range_ratio,
        seed,
        overhead_tokens,
        salt,
    )
    return [to_request(p, f"{point_id}-{i}", spec) for i, p in enumerate(prompts)]


def check_text_budget(spec: BenchmarkSpec) -> None:
    """Refuse a sweep whose prompts, built as text, would hold more than
    MAX_PROMPT_TEXT_TOKENS tokens (gigabytes of memory before the first request)."""
    n = sum(spec.requests_for(c) + spec.warmup_for(c) for c in spec.load.concurrency)
    n += sum(sum(rate_point_sizes(spec, r)) for r in spec.load.request_rates_per_s)
    tokens = n * spec.shape.isl_tokens
    if tokens > MAX_PROMPT_TEXT_TOKENS:
        raise SpecError(
            f"The sweep would build {n:,} prompts of up to shape.isl_tokens = "
            f"{spec.shape.isl_tokens:,} tokens ({tokens:,} tokens of text), over the limit of "
            f"{MAX_PROMPT_TEXT_TOKENS:,}; lower load.requests_per_point, load.concurrency or "
            "--isl."
        )


def build_plans(
    spec: BenchmarkSpec, tokenizer: Tokenizer | None, overhead_tokens: int = 0, salt: str = ""
) -> list[PointPlan]:
    """Every point of the sweep, concurrency points first, in the order given
    (`tokenizer=None`: token counts only, for targets that never read the text; `salt`:
    the run's prompt-text salt, see `build_prompts`). A sweep whose prompt text would pass
    `MAX_PROMPT_TEXT_TOKENS` is refused before any is built."""
    if tokenizer is not None:
        check_text_budget(spec)
    plans = []
    for i, conc in enumerate(spec.load.concurrency):
        n, w = spec.requests_for(conc), spec.warmup_for(conc)
        pid = f"c{conc}"
        reqs = _requests(spec, tokenizer, pid, n + w, spec.seed * 1000 + i, overhead_tokens, salt)
        plans.append(PointPlan(pid, "concurrency", float(conc), reqs[:w], reqs[w:], conc))
    for j, rate in enumerate(spec.load.request_rates_per_s):
        n, w = rate_point_sizes(spec, rate)
        pid = f"r{rate:g}"
        seed = spec.seed * 1000 + 500 + j
        reqs = _requests(spec, tokenizer, pid, n + w, seed, overhead_tokens, salt)
        arrivals = arrival_offsets_ns(n + w, rate, spec.load.burstiness, seed)
        plans.append(
            PointPlan(pid, "rate", rate, reqs[:w], reqs[w:], spec.load.max_concurrency, arrivals)
        )
    return plans
