"""The digital twin: a calibrated performance model of accelerators serving LLMs, behind the
same Server/Clock seam as a real endpoint (see docs/design/twin.md). Nothing in the core
imports it; `scoville.targets.registry` opens `twin:` URLs through `twin.target`.
"""
