"""The trainer's stdout: one JSON object a line, `{"gpurack": EVENT, ...}`; everything else is stderr."""

from __future__ import annotations

import json
import math
import sys
import time
from typing import TextIO

# `error`: the one line a trainer that stops prints, so a watcher need not wait out its timeout.
EVENTS = ("staging", "allreduce", "resume", "step", "checkpoint", "done", "error")


def event_line(event: str, **fields: object) -> str:
    """One event as a JSON line (no newline); floats rounded to 6 significant digits, and `t`,
    the Unix time in milliseconds (what a watcher times a restore by).

    Raises:
        ValueError: for an event name outside EVENTS.
    """
    if event not in EVENTS:
        raise ValueError(f"unknown event {event!r}")
    doc: dict[str, object] = {"gpurack": event}
    for key, value in fields.items():
        if isinstance(value, float):
            # JSON has no NaN or infinity (a run of zero steps has no loss): null instead.
            doc[key] = float(f"{value:.6g}") if math.isfinite(value) else None
        else:
            doc[key] = value
    doc["t"] = round(time.time(), 3)
    return json.dumps(doc, separators=(",", ":"))


def emit(event: str, stream: TextIO | None = None, **fields: object) -> None:
    out = stream if stream is not None else sys.stdout
    out.write(event_line(event, **fields) + "\n")
    out.flush()


def log(message: str) -> None:
    sys.stderr.write(f"gpurack_trainer: {message}\n")
    sys.stderr.flush()


def allreduce_bandwidth(nbytes: int, seconds_per_iter: float, world_size: int) -> tuple[float, float]:
    """Algorithm and bus bandwidth in GB/s of one all-reduce, as nccl-tests defines them.

    busbw = algbw * 2(n-1)/n: the bytes each rank's link carries in a ring all-reduce.

    Raises:
        ValueError: for a non-positive time or world size.
    """
    if seconds_per_iter <= 0 or world_size < 1:
        raise ValueError("all-reduce time and world size must be positive")
    algbw = nbytes / seconds_per_iter / 1e9
    return algbw, algbw * 2 * (world_size - 1) / world_size


def gbps(nbytes: int, seconds: float) -> float:
    """Decimal GB/s; 0.0 for a zero time (nothing measurable)."""
    return nbytes / seconds / 1e9 if seconds > 0 else 0.0
