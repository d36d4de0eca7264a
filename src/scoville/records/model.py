"""Per-request facts: what was sent, when each chunk arrived, what the server counted.

Records sit between the client (which produces them) and metrics (which derive numbers from
them). Every timestamp is an integer number of nanoseconds on the run's clock: the monotonic
clock for real servers, the virtual clock for the twin. Nothing here is derived.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

Phase = Literal["warmup", "measure", "primer"]
Mode = Literal["concurrency", "rate", "lanes"]  # how a point is loaded: streams, req/s, lanes
TokenSource = Literal["usage", "local", "none"]


class ErrorKind(enum.StrEnum):
    """Why a request failed. One value per failure class a user can act on."""

    CONNECT = "connect"  # TCP connect refused / DNS / unreachable
    TIMEOUT = "timeout"  # no byte for longer than the request timeout
    HTTP_4XX = "http_4xx"  # client errors other than 429
    RATE_LIMITED = "rate_limited"  # HTTP 429
    HTTP_5XX = "http_5xx"  # server errors
    STREAM_CUT = "stream_cut"  # connection closed before [DONE] / finish_reason
    MALFORMED = "malformed"  # SSE frame or JSON that cannot be parsed
    EMPTY = "empty"  # stream ended without any output token
    SHORT_OUTPUT = "short_output"  # fewer output tokens than demanded with ignore_eos
    CONTEXT_OVERFLOW = "context_overflow"  # prompt + max_tokens exceed the server's window
    CANCELLED = "cancelled"  # the run was stopped while the request was in flight
    CLIENT = "client"  # a bug or resource error on our side (recorded, never hidden)
    TOKEN_COUNT = "token_count"  # the output could not be counted (server tokenizer failed)


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request, as observed by the client.

    Invariants: `send_ns <= start_ns <= chunk_ns[0] <= ... <= chunk_ns[-1] <= end_ns`;
    `len(chunk_tokens) == len(chunk_ns)`; a record with `error is None` has at least one chunk.
    `chunk_ns` holds the arrival time of every SSE frame that carried output text, taken before
    the frame was parsed. `chunk_tokens[i]` is the number of output tokens frame i carried
    (1 for servers that stream token by token; counted with the local tokenizer otherwise).
    `output_tokens` is the server's `usage.completion_tokens` when reported (`token_source ==
    "usage"`), else the sum of `chunk_tokens` ("local").
    """

    request_id: str
    point_id: str  # the sweep point this request belongs to, e.g. "c8" or "r2.5"
    phase: Phase
    start_ns: int  # when the request's last byte was written (TTFT and E2E start here)
    end_ns: int  # when the stream ended (success) or the failure was seen
    chunk_ns: tuple[int, ...] = ()
    chunk_tokens: tuple[int, ...] = ()
    input_tokens: int = 0  # prompt tokens (server usage, else local count)
    output_tokens: int = 0
    expected_input_tokens: int = 0  # what the workload built (exact for fixed-sequence)
    expected_output_tokens: int = 0  # max_tokens asked for
    cached_tokens: int | None = None  # usage.prompt_tokens_details.cached_tokens, when reported
    token_source: TokenSource = "usage"
    usage_issue: str = ""  # why the server's usage was not believed ("" = believed or absent)
    scheduled_ns: int | None = None  # intended send time (open loop, think time); None = ASAP
    error: ErrorKind | None = None
    error_detail: str = ""
    http_status: int | None = None
    finish_reason: str | None = None
    worker: str = "0"  # which client process/worker sent it
    send_ns: int | None = None  # when the client began the request (before connecting)
    connect_ms: float | None = None  # connection set-up; 0.0 = reused keep-alive connection
    retries: int = 0  # sent again after a stale keep-alive connection
    tags: dict[str, Any] = field(default_factory=dict)  # session/turn ids and other labels

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json_dict(self) -> dict[str, Any]:
        # field by field, not `asdict`: its deep copy visits every chunk time one by one
        d = {f.name: getattr(self, f.name) for f in _RECORD_FIELDS}
        d["tags"] = dict(self.tags)
        d["chunk_ns"] = list(self.chunk_ns)
        d["chunk_tokens"] = list(self.chunk_tokens)
        d["error"] = self.error.value if self.error is not None else None
        return d

    @classmethod
    def from_json_dict(cls, d: dict[str, Any]) -> RequestRecord:
        d = dict(d)
        d["chunk_ns"] = tuple(d.get("chunk_ns", ()))
        d["chunk_tokens"] = tuple(d.get("chunk_tokens", ()))
        err = d.get("error")
        d["error"] = ErrorKind(err) if err else None
        return cls(**d)


_RECORD_FIELDS = fields(RequestRecord)


@dataclass(frozen=True, slots=True)
class PointWindow:
    """The measurement window of one sweep point: [start_ns, end_ns] on the run's clock.

    Opens when the first measured request is sent (warmup excluded) and closes when the last
    measured request ends. Throughputs divide by `end_ns - start_ns`.
    """

    point_id: str
    start_ns: int
    end_ns: int
    mode: Mode
    level: float  # the concurrency, the request rate (req/s) or the lane count
    sent: int  # measured requests sent
    diagnostic: bool = False  # the point is not valid for publication (e.g. too short)
    notes: tuple[str, ...] = ()
    partial: bool = False  # the run was stopped before the point finished (never valid)

    def to_json_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["notes"] = list(self.notes)
        return d

    @classmethod
    def from_json_dict(cls, d: dict[str, Any]) -> PointWindow:
        d = dict(d)
        d["notes"] = tuple(d.get("notes", ()))
        return cls(**d)
