"""Fixtures for the CLI tests: run gpurack in-process, writable copies of the real captures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_helpers import Gpurack, Outcome
from gpurack import cli


@pytest.fixture
def gpurack(capsys: pytest.CaptureFixture[str]) -> Gpurack:
    """Call `gpurack ARGS...` through cli.main and capture its output."""

    def call(*argv: str | Path) -> Outcome:
        capsys.readouterr()
        code = cli.main([str(a) for a in argv])
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return call


@pytest.fixture
def h200x1_copy(h200x1: Path, tmp_path: Path) -> Path:
    """A writable copy of the real 1x H200 capture, for negative cases."""
    copy = tmp_path / "h200x1"
    shutil.copytree(h200x1, copy)
    for path in copy.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    return copy
