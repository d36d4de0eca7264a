"""Agentic replay workload: session DAGs from traces or a generator, prompts from block hashes.

Sources (`mooncake`, `weka`, `synthetic`) build `Session`s; `prompts` turns their block hashes
into exact-length text; `cache` computes what an unlimited prefix cache would hit; the lane driver
in `scoville.client.lanes` replays them.
"""
