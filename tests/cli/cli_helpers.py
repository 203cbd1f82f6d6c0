"""Helpers shared by the CLI tests (imported as a top-level module: tests/cli has no __init__)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Outcome:
    """Exit code, stdout and stderr of one CLI call."""

    code: int
    out: str
    err: str


Gpurack = Callable[..., Outcome]


def truncate(path: Path) -> None:
    """Cut a capture file in half, losing its `# rc=N` footer like an interrupted copy."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
