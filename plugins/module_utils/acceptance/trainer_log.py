# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What the acceptance trainer reported, read from its log (workloads/trainer/README.md).

The trainer prints one JSON object per line, `{"gpurack": EVENT, ...}`; every other line
(library warnings, a traceback) is ignored here. Several attempts of the same job (a pod
deleted and restarted) may be concatenated: each `resume` starts a new attempt.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

EVENTS = ("staging", "allreduce", "resume", "step", "checkpoint", "done")
STARTS = ("staging", "resume")  # printed once by each start of the trainer


@dataclass(frozen=True, slots=True)
class Attempt:
    """One start of the trainer: the events it printed, by kind, in order."""

    resume: Mapping[str, Any] | None = None
    staging: Mapping[str, Any] | None = None
    allreduce: Mapping[str, Any] | None = None
    steps: tuple[Mapping[str, Any], ...] = ()
    checkpoints: tuple[Mapping[str, Any], ...] = ()
    done: Mapping[str, Any] | None = None

    @property
    def last_step(self) -> int:
        """The highest step this attempt reached (logged, checkpointed or finished), else its resume step."""
        seen = [int(e.get("step") or 0) for e in (*self.steps, *self.checkpoints)]
        if self.done is not None:
            seen.append(int(self.done.get("steps") or 0))
        if self.resume is not None:
            seen.append(int(self.resume.get("step") or 0))
        return max(seen, default=0)


@dataclass(frozen=True, slots=True)
class TrainerReport:
    """Every attempt of one training job, first to last."""

    attempts: tuple[Attempt, ...] = field(default_factory=tuple)

    @property
    def final(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None

    @property
    def finished(self) -> bool:
        return self.final is not None and self.final.done is not None


def events(lines: Iterable[str]) -> list[dict[str, Any]]:
    """The trainer's event objects among `lines`, in order; anything else is skipped."""
    found = []
    for line in lines:
        text = line.strip()
        if not text.startswith("{"):
            continue
        try:
            item = json.loads(text)
        except ValueError:
            continue
        if isinstance(item, dict) and item.get("gpurack") in EVENTS:
            found.append(item)
    return found


def read(lines: Iterable[str]) -> TrainerReport:
    """The attempts in a trainer log (possibly several pods' logs one after another)."""
    attempts: list[dict[str, Any]] = []
    for item in events(lines):
        kind = item["gpurack"]
        # Each start prints `staging` and `resume` once (staging first): seeing either a second
        # time means the next start has begun.
        if not attempts or (kind in STARTS and kind in attempts[-1]):
            attempts.append({"steps": [], "checkpoints": []})
        current = attempts[-1]
        if kind in ("step", "checkpoint"):
            current[f"{kind}s"].append(item)
        else:
            current[kind] = item
    return TrainerReport(
        tuple(
            Attempt(
                resume=a.get("resume"),
                staging=a.get("staging"),
                allreduce=a.get("allreduce"),
                steps=tuple(a["steps"]),
                checkpoints=tuple(a["checkpoints"]),
                done=a.get("done"),
            )
            for a in attempts
        )
    )
