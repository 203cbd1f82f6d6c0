"""Checkpoint names and which one to restore: `ckpt-<step, 10 digits>.pt`, the highest step wins.

Only complete checkpoints carry that exact name (a local write goes to a dotted temporary
name first, an S3 object appears whole), so a half-written one is never picked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_NAME = re.compile(r"ckpt-(\d{10})\.pt")


def checkpoint_name(step: int) -> str:
    """The object name of the checkpoint taken after `step` steps.

    Raises:
        ValueError: for a negative step or one over 10 digits.
    """
    if not 0 <= step < 10**10:
        raise ValueError(f"step out of range: {step}")
    return f"ckpt-{step:010d}.pt"


def step_of(name: str) -> int | None:
    m = _NAME.fullmatch(name)
    return int(m.group(1)) if m else None


def newest(names: Iterable[str]) -> str | None:
    """The complete checkpoint with the highest step among `names`, or None."""
    steps = {s: n for n in names if (s := step_of(n)) is not None}
    return steps[max(steps)] if steps else None


def stale(names: Iterable[str], keep: int) -> list[str]:
    """The checkpoints beyond the newest `keep`, oldest first: safe to delete."""
    ordered = sorted((s, n) for n in names if (s := step_of(n)) is not None)
    return [n for _, n in ordered[: max(0, len(ordered) - keep)]]
