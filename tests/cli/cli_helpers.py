"""Helpers shared by the CLI tests (a plain module: a second conftest.py here would shadow
the `conftest` name that the unit tests import from tests/conftest.py)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from gpurack import cli


@dataclass(frozen=True)
class Outcome:
    """Exit code, stdout and stderr of one CLI call."""

    code: int
    out: str
    err: str


def invoke(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> Outcome:
    """Call `gpurack ARGS...` in-process through cli.main and capture what it printed."""
    capsys.readouterr()
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


def truncated_copy(capture: Path, tmp_path: Path) -> Path:
    """A copy of a capture whose nvidia-smi -q files are cut in half, losing their `# rc=N` footer."""
    copy = tmp_path / capture.name
    shutil.copytree(capture, copy)
    for name in ("nvidia-smi-q.xml", "nvidia-smi-q.txt"):
        path = copy / name
        path.chmod(path.stat().st_mode | 0o200)
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    return copy
