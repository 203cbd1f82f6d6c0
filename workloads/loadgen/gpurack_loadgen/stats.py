"""Exact figures from every request's own latency, and the one JSON line.

locust's own statistics keep a histogram rounded to about two significant digits (whole ms below
100 ms; a 1234 ms answer counts as 1200 ms), so the tool records each answer itself. Percentiles
are nearest-rank: the value at 1-based rank ceil(p/100 * n) of the sorted latencies, always one
that was measured. Latency figures are over the good answers; failures are counted by kind, not
timed.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

PERCENTILES = (50, 95, 99)


def nearest_rank(ordered: Sequence[float], percent: int) -> float:
    """The `percent` percentile of sorted values: the smallest with at least `percent`% of the
    values at or below it (integer arithmetic: no float rounding moves the rank).

    Raises:
        ValueError: no values, or a percent outside 1..100.
    """
    if not ordered or not 1 <= percent <= 100:
        raise ValueError(
            f"nearest_rank needs values and a percent in 1..100, got {len(ordered)} and {percent}"
        )
    rank = -(-percent * len(ordered) // 100)  # ceil without floats
    return ordered[rank - 1]


def root_error(error: BaseException | None) -> BaseException | None:
    """The error itself, or the one geventhttpclient's RetriesExceeded wraps (`original`)."""
    original = getattr(error, "original", None)
    return original if isinstance(original, BaseException) else error


def failure_kind(status: int, body: bytes | None, error: BaseException | None) -> str | None:
    """None for a good answer (HTTP 200 whose JSON has a non-empty `data[0].embedding` list);
    otherwise the kind `failure_kinds` counts it under."""
    if status == 0:  # no HTTP answer at all: locust's stand-in response for a socket error
        error = root_error(error)
        name = type(error).__name__ if error is not None else "error"
        return (
            "timeout"
            if isinstance(error, TimeoutError) or "timeout" in name.lower()
            else f"connection: {name}"
        )
    if status != 200:
        return f"HTTP {status}"
    try:
        embedding = json.loads(body or b"")["data"][0]["embedding"]
    except (ValueError, KeyError, IndexError, TypeError):
        return "no embedding"
    return None if isinstance(embedding, list) and embedding else "no embedding"


@dataclass
class Recorder:
    """Every answered request of one run: good answers' latencies, failures by kind and time."""

    ok_ms: list[float] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)
    failures: int = 0
    retried: int = 0  # requests sent more than once after an unanswered close (the last try counts)
    first_failure_s: float | None = None
    last_failure_s: float | None = None

    @property
    def requests(self) -> int:
        return len(self.ok_ms) + self.failures

    def add(self, latency_ms: float, kind: str | None, at_s: float, tries: int = 1) -> None:
        """One answered request; `at_s`: when it ended, in seconds from the run's start;
        `tries`: how many times it was sent (more than 1: sent again after an unanswered close)."""
        if tries > 1:
            self.retried += 1
        if kind is None:
            self.ok_ms.append(latency_ms)
            return
        self.failures += 1
        self.kinds[kind] += 1
        if self.first_failure_s is None:
            self.first_failure_s = at_s
        self.last_failure_s = at_s


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def latency_figures(latencies_ms: Sequence[float]) -> dict[str, float | None]:
    """p50/p95/p99 (nearest rank), mean and max in ms; None each when nothing was answered well."""
    ordered = sorted(latencies_ms)
    figures: dict[str, float | None] = {
        f"p{p}_ms": _ms(nearest_rank(ordered, p) if ordered else None) for p in PERCENTILES
    }
    figures["mean_ms"] = _ms(math.fsum(ordered) / len(ordered) if ordered else None)
    figures["max_ms"] = _ms(ordered[-1] if ordered else None)
    return figures


def summary(recorder: Recorder, *, concurrency: int, seconds: float, tool_version: str) -> dict[str, Any]:
    """The JSON line's figures; `seconds`: the run's wall time, from the first user's start."""
    n = recorder.requests
    line: dict[str, Any] = {
        "tool": "locust",
        "tool_version": tool_version,
        "concurrency": concurrency,
        "requests": n,
        "failures": recorder.failures,
        "error_rate": round(recorder.failures / n, 6) if n else None,
        "retried": recorder.retried,
    }
    line.update(latency_figures(recorder.ok_ms))
    line["rps"] = round(len(recorder.ok_ms) / seconds, 3) if seconds > 0 else None
    line["seconds"] = round(seconds, 3)
    line["failure_kinds"] = dict(sorted(recorder.kinds.items()))
    line["first_failure_s"] = _ms(recorder.first_failure_s)
    line["last_failure_s"] = _ms(recorder.last_failure_s)
    return line
