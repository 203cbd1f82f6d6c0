"""Shared test paths: real captures live in ../shared/fixtures beside the checkout (CI too)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = (REPO.parent / "shared" / "fixtures").resolve()
HW = FIXTURES / "hw"
PUBLIC = FIXTURES / "public" / "gpud"
H200X1 = HW / "h200x1"


def pytest_configure(config: pytest.Config) -> None:
    if not FIXTURES.is_dir():
        raise pytest.UsageError(f"real captures not found at {FIXTURES}: check out ../shared beside the repo")


@pytest.fixture(autouse=True)
def _private_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every test's inventory DB and run artifacts out of the user's home and the repo."""
    monkeypatch.setenv("GPURACK_DB", str(tmp_path / "gpurack-state" / "inventory.db"))
    monkeypatch.setenv("GPURACK_STATE_DIR", str(tmp_path / "gpurack-state"))


@pytest.fixture
def h200x1() -> Path:
    """The real 1x H200 capture bundle (read-only: copy it with shutil.copytree to edit)."""
    return H200X1


@pytest.fixture
def writable_capture(tmp_path: Path) -> Callable[[Path, str], Path]:
    """Copy a capture to tmp_path/NAME that a test may edit (the real captures are read-only)."""

    def copy(capture: Path, name: str) -> Path:
        dest = tmp_path / name
        shutil.copytree(capture, dest, copy_function=shutil.copyfile)
        for path in [dest, *dest.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        return dest

    return copy


@pytest.fixture
def public() -> Path:
    """The public captures (8x H100, RTX 4090, ibstat, lspci, Xid log)."""
    return PUBLIC
