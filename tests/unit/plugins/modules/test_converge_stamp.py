"""converge_stamp module: record, hold, say what changed, and write nothing in check mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from module_helpers import run_module


def _run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, **args: Any
) -> dict[str, Any]:
    managed = tmp_path / "etc" / "90-gpurack.conf"
    defaults = {
        "name": "os_tuning",
        "stamp_dir": str(tmp_path / "stamps"),
        "inputs": {"vars": {"os_tuning_sysctl_manage": True}},
        "probe": {"paths": [str(managed), str(tmp_path / "etc" / "*.conf")]},
    }
    return run_module(monkeypatch, capsys, "converge_stamp", **{**defaults, **args})


def test_a_recorded_stamp_holds_until_a_managed_file_changes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    managed = tmp_path / "etc" / "90-gpurack.conf"
    managed.parent.mkdir()
    managed.write_text("vm.max_map_count = 1048576\n")
    first = _run(monkeypatch, capsys, tmp_path)
    assert (first["holds"], first["reasons"], first["changed"]) == (False, ["no stamp recorded yet"], False)
    assert first["ansible_facts"] == {"gpurack_converged_os_tuning": False}
    named = _run(monkeypatch, capsys, tmp_path, name="os_tuning_other", role="os_tuning")
    assert named["ansible_facts"] == {"gpurack_converged_os_tuning": False}  # the role's fact
    facts = {"os_tuning_reboot_pending": False, "os_tuning_reboot_reasons": []}
    recorded = _run(monkeypatch, capsys, tmp_path, state="recorded", facts=facts)
    assert recorded["changed"] is False
    assert recorded["ansible_facts"] == {"gpurack_converged_os_tuning": False}  # the role just ran
    stamp = json.loads((tmp_path / "stamps" / "os_tuning.json").read_text())
    assert set(stamp["state"]) == {f"path {managed}"}  # the glob's one match, probed once
    held = _run(monkeypatch, capsys, tmp_path)
    assert (held["holds"], held["reasons"]) == (True, [])
    assert held["ansible_facts"] == {**facts, "gpurack_converged_os_tuning": True}

    managed.write_text("vm.max_map_count = 1\n")
    drifted = _run(monkeypatch, capsys, tmp_path)
    assert drifted["holds"] is False
    assert [reason.split(":")[0] for reason in drifted["reasons"]] == [f"path {managed}"]
    assert drifted["ansible_facts"] == {"gpurack_converged_os_tuning": False}  # none of the stamp's

    managed.write_text("vm.max_map_count = 1048576\n")
    assert _run(monkeypatch, capsys, tmp_path)["holds"] is True
    changed_inputs = _run(monkeypatch, capsys, tmp_path, inputs={"vars": {"os_tuning_sysctl_manage": False}})
    assert changed_inputs["reasons"] == ["the role or its inputs changed"]


def test_check_mode_records_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = _run(monkeypatch, capsys, tmp_path, state="recorded", _ansible_check_mode=True)
    assert result["changed"] is False
    assert not (tmp_path / "stamps").exists()
    assert _run(monkeypatch, capsys, tmp_path)["holds"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [({"name": "../etc/passwd"}, "name must match"), ({"probe": {"files": ["/x"]}}, "unknown keys files")],
)
def test_bad_input_is_refused_with_a_message(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: dict[str, Any],
    message: str,
) -> None:
    result = _run(monkeypatch, capsys, tmp_path, **args)
    assert result["failed"] is True
    assert message in result["msg"]
