"""What the registry hands the pipeline: typed facts, so no caller asks which kind it got."""

from __future__ import annotations

import asyncio

from scoville.spec.model import AcceleratorSpec, BenchmarkSpec
from scoville.targets.registry import open_target


def test_a_twin_target_states_its_facts() -> None:
    spec = BenchmarkSpec.model_validate(
        {"target": {"url": "twin:H200/gpt-oss-120b?tp=2", "tokenizer": "tiktoken:o200k_base"}}
    )
    target = open_target(spec)
    try:
        assert target.accelerators == AcceleratorSpec(kind="H200", count=2)
        assert target.labels["framework"] == "scoville-twin"
        assert not target.supports_workers and not target.has_telemetry
        assert not target.wants_text
        source = target.source([])
        assert source.model == target.model and source.extra == {}
        assert source.manifest["kind"] == "twin"
        assert source.manifest["label_defaults"]["framework"] == "scoville-twin"
    finally:
        asyncio.run(target.close())
