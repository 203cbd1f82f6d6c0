"""validation_textfile module: atomic write, unchanged re-run keeps the file, check and diff mode."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult
from module_helpers import run_module

RESULTS = [
    CheckResult(id="gpu.count", verdict="fail", measured=1).to_dict(),
    CheckResult(id="gpu.memory", verdict="pass", component="gpu0", measured=143771).to_dict(),
]


def _run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], folder: Path, **args: Any
) -> dict[str, Any]:
    defaults = {"directory": str(folder), "node": "gpu01", "pool": "h200-train-a", "results": RESULTS}
    return run_module(monkeypatch, capsys, "validation_textfile", **{**defaults, **args})


def test_writes_the_file_then_a_rerun_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "textfile"
    first = _run(monkeypatch, capsys, folder, validated=False)
    path = folder / "gpurack.prom"
    assert first["changed"] is True
    assert first["path"] == str(path)
    text = path.read_text()
    assert 'gpurack_node_validated{node="gpu01",pool="h200-train-a"} 0' in text
    assert first["series"] == 2 * 4 + 2 + 1 + 1
    assert path.stat().st_mode & 0o777 == 0o644
    # Only the file: no temporary file is left behind for the collector to read.
    assert os.listdir(folder) == ["gpurack.prom"]
    mtime = path.stat().st_mtime_ns

    second = _run(monkeypatch, capsys, folder, validated=False)
    assert second["changed"] is False
    assert path.read_text() == text
    assert path.stat().st_mtime_ns == mtime


def test_a_changed_verdict_rewrites_the_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _run(monkeypatch, capsys, tmp_path, validated=False)
    result = _run(
        monkeypatch, capsys, tmp_path, results=[CheckResult(id="gpu.count", verdict="pass").to_dict()]
    )
    assert result["changed"] is True
    text = (tmp_path / "gpurack.prom").read_text()
    assert 'gpurack_node_validated{node="gpu01",pool="h200-train-a"} 1' in text
    assert "gpu.memory" not in text


def test_check_mode_writes_nothing_and_diff_shows_the_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "absent"
    result = _run(monkeypatch, capsys, folder, _ansible_check_mode=True, _ansible_diff=True)
    assert result["changed"] is True
    assert not folder.exists()
    assert result["diff"]["before"] == ""
    assert result["diff"]["after"].startswith("# HELP gpurack_check_verdict ")


def test_bad_results_fail_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = _run(monkeypatch, capsys, tmp_path, results=[{"id": "x", "verdict": "maybe"}])
    assert result["failed"] is True
    assert result["msg"].startswith("Invalid results: verdict must be one of pass, warn, fail, skip")
    assert not (tmp_path / "gpurack.prom").exists()


def test_without_create_a_host_without_the_folder_gets_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "textfile"
    skipped = _run(monkeypatch, capsys, folder, create=False)
    assert (skipped["changed"], skipped["written"], skipped["series"]) == (False, False, 0)
    assert not folder.exists()
    folder.mkdir()
    written = _run(monkeypatch, capsys, folder, create=False)
    assert (written["changed"], written["written"]) == (True, True)
    assert (folder / "gpurack.prom").is_file()
