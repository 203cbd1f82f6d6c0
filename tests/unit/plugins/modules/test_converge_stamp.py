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


def _managed(tmp_path: Path) -> Path:
    """The file the default probe watches, written as the role would leave it."""
    managed = tmp_path / "etc" / "90-gpurack.conf"
    managed.parent.mkdir()
    managed.write_text("vm.max_map_count = 1048576\n")
    return managed


def test_a_recorded_stamp_holds_until_a_managed_file_changes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    managed = _managed(tmp_path)
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


def test_a_survey_reads_the_other_stamps_of_the_roles_and_says_which_still_hold(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _managed(tmp_path)
    other = tmp_path / "etc" / "containerd.toml"
    other.write_text("version = 3\n")
    other_args = {"name": "container_runtime_nvidia", "inputs": {"v": 1}, "probe": {"paths": [str(other)]}}
    _run(monkeypatch, capsys, tmp_path, state="recorded")
    _run(monkeypatch, capsys, tmp_path, state="recorded", **other_args)
    _run(monkeypatch, capsys, tmp_path, state="recorded", name="observability_node_exporter", facts={"a": 1})
    stamps = tmp_path / "stamps"
    (stamps / "fabric.json").write_text(
        '{"format": 2, "inputs": "x", "state": {}, "facts": {}, "probe": {"paths": 5}}'
    )
    (stamps / "nvme_scratch.json").write_text('{"format": 1, "inputs": "x", "state": {}, "facts": {}}')
    roles = ["os_tuning", "container_runtime", "fabric", "nvme_scratch", "observability"]

    surveyed = _run(monkeypatch, capsys, tmp_path, survey=roles)
    assert surveyed["holds"] is True
    # Not its own, not an unreadable probe or an older format; a role's suffixed stamps too.
    assert sorted(surveyed["survey"]) == ["container_runtime_nvidia", "observability_node_exporter"]
    runtime = surveyed["survey"]["container_runtime_nvidia"]
    assert runtime["holds"] is True and runtime["probe"] == {"paths": [str(other)]}
    assert surveyed["survey"]["observability_node_exporter"]["facts"] == {"a": 1}
    assert list(_run(monkeypatch, capsys, tmp_path, survey=["os_tuning", "fabric"])["survey"]) == []

    other.write_text("version = 2\n")
    drifted = _run(monkeypatch, capsys, tmp_path, survey=roles)
    assert drifted["holds"] is True  # this stamp's own files are unchanged
    assert drifted["survey"]["container_runtime_nvidia"]["holds"] is False
    assert "survey" not in _run(monkeypatch, capsys, tmp_path)  # only when asked


def test_a_stamp_recorded_with_another_probe_does_not_hold(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _run(monkeypatch, capsys, tmp_path, state="recorded", probe={"paths": [str(tmp_path / "a")]})
    # Both paths are absent, so the live state alone would not tell the probes apart.
    moved = _run(monkeypatch, capsys, tmp_path, probe={"paths": [str(tmp_path / "a")], "mounts": []})
    assert moved["holds"] is True  # an empty kind is no change
    widened = _run(monkeypatch, capsys, tmp_path, probe={"paths": [str(tmp_path / "a")], "fstab": ["swap"]})
    assert widened["holds"] is False
