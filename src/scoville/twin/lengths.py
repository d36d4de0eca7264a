"""Dataset length profiles (`scoville/data/twin/lengths.yaml`): the input and output token
lengths of a benchmark's dataset, each as a quantile table, so that a calibration row measured
on a dataset (MLPerf's Offline, Server and Interactive runs) sends the twin requests of that
dataset's lengths, not one fixed shape.

A profile's quantile table is a piecewise-linear inverse CDF: (0, shortest) ... (1, longest).
`draw` takes n stratified quantiles ((i + 0.5) / n, shuffled by a seed) for input and output
independently: the tables say nothing about how a prompt's length and its answer's relate, and
the twin's step costs read a step's sums of lengths, which independence keeps in expectation.
"""

from __future__ import annotations

import itertools
import zlib
from functools import cache
from importlib import resources

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from scoville.client.seam import GenerateRequest


class Lengths(BaseModel):
    """One length's distribution: a quantile table, with the source of each figure."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    quantiles: tuple[tuple[float, int], ...] = Field(
        ..., description="(quantile, tokens) pairs from (0, shortest) to (1, longest)"
    )
    source: str = Field(..., min_length=1)

    @field_validator("quantiles")
    @classmethod
    def _a_table(cls, v: tuple[tuple[float, int], ...]) -> tuple[tuple[float, int], ...]:
        qs = [q for q, _ in v]
        tokens = [t for _, t in v]
        if len(v) < 2 or qs[0] != 0.0 or qs[-1] != 1.0:
            raise ValueError("a quantile table runs from quantile 0 to quantile 1")
        if any(b <= a for a, b in itertools.pairwise(qs)):
            raise ValueError("quantiles must increase")
        if any(b < a for a, b in itertools.pairwise(tokens)) or tokens[0] < 1:
            raise ValueError("lengths must be at least 1 token and never fall")
        return v

    def mean(self) -> float:
        """The mean length: the integral of the piecewise-linear inverse CDF."""
        return sum(
            (q1 - q0) * (t0 + t1) / 2.0 for (q0, t0), (q1, t1) in itertools.pairwise(self.quantiles)
        )

    def at(self, u: np.ndarray, scale: float = 1.0) -> np.ndarray:
        """Lengths (whole tokens, at least 1) at quantiles `u`, each multiplied by `scale`
        before it is rounded."""
        qs = np.array([q for q, _ in self.quantiles])
        ts = np.array([t for _, t in self.quantiles], dtype=float) * scale
        out: np.ndarray = np.maximum(1, np.rint(np.interp(u, qs, ts))).astype(int)
        return out


class LengthProfile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    dataset: str = Field(..., min_length=1)
    samples: int = Field(..., ge=1, description="the dataset's sample count")
    tokenizer: str = Field(..., min_length=1)
    input: Lengths
    output: Lengths
    note: str = ""

    def mean_lengths(self) -> tuple[int, int]:
        """The profile's mean input and output lengths, rounded to whole tokens."""
        return round(self.input.mean()), round(self.output.mean())

    def draw(self, n: int, seed: int, output_mean: float | None = None) -> list[tuple[int, int]]:
        """`n` (input, output) lengths: stratified quantiles, shuffled by `seed`. With
        `output_mean`, the output table is scaled to that mean (a run whose model answered
        longer or shorter than the reference: its shape kept, its mean the run's own)."""
        rng = np.random.default_rng(seed)
        u = (np.arange(n) + 0.5) / n
        isl = self.input.at(rng.permutation(u))
        scale = 1.0 if output_mean is None else output_mean / self.output.mean()
        osl = self.output.at(rng.permutation(u), scale)
        return [(int(a), int(b)) for a, b in zip(isl, osl, strict=True)]


class LengthBook(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    schema_: str = Field(alias="schema")
    profiles: dict[str, LengthProfile]


@cache
def load_lengths() -> LengthBook:
    text = (
        resources.files("scoville")
        .joinpath("data", "twin", "lengths.yaml")
        .read_text(encoding="utf-8")
    )
    return LengthBook.model_validate(yaml.safe_load(text))


def profile(name: str) -> LengthProfile:
    book = load_lengths()
    if name not in book.profiles:
        known = ", ".join(sorted(book.profiles))
        raise ValueError(f"no length profile {name!r} (known: {known})")
    return book.profiles[name]


def seed_of(text: str) -> int:
    """A stable seed from a row's id (the same draw in every process and run)."""
    return zlib.crc32(text.encode("utf-8"))


def dataset_requests(
    name: str, n: int, seed: int, tag: str = "", output_mean: float | None = None
) -> list[GenerateRequest]:
    """`n` length-only completions requests drawn from profile `name` (outputs scaled to
    `output_mean` where given); ids `{tag}{i}`."""
    return [
        GenerateRequest(f"{tag}{i}", "completions", isl, osl, prompt="")
        for i, (isl, osl) in enumerate(profile(name).draw(n, seed, output_mean))
    ]
