"""roles/capture: its YAML copy of the capture table cannot drift from module_utils/_capture.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils._capture import (
    CAPTURE_COMMANDS,
    CAPTURE_FILES,
    CAPTURE_SYSFS_GLOBS,
)

ROLE = Path(__file__).resolve().parents[2] / "roles" / "capture"


@pytest.fixture(scope="module")
def role_vars() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())
    return data


def test_commands_equal_capture_commands(role_vars: dict[str, Any]) -> None:
    listed = [(c["filename"], tuple(c["argv"])) for c in role_vars["__capture_commands"]]
    assert listed == [(c.filename, c.argv) for c in CAPTURE_COMMANDS]


def test_files_equal_capture_files(role_vars: dict[str, Any]) -> None:
    assert tuple(f["name"] for f in role_vars["__capture_files"]) == CAPTURE_FILES
    for entry in role_vars["__capture_files"]:
        assert all(p.startswith("/") for p in entry["paths"])


def test_sysfs_globs_equal_capture_sysfs_globs(role_vars: dict[str, Any]) -> None:
    assert tuple(s["glob"] for s in role_vars["__capture_sysfs"]) == CAPTURE_SYSFS_GLOBS
    assert all(isinstance(s["depth"], int) and s["depth"] >= 0 for s in role_vars["__capture_sysfs"])
