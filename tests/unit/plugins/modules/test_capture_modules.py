"""capture_bundle: the capture role's module writes the bundle `gpurack capture` writes, as a tar.gz."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    CAPTURE_COMMANDS,
    CAPTURE_FILES,
    parse_capture_file,
)
from module_helpers import run_module


def _installed(tool: str) -> bool:
    return any((Path(d) / tool).exists() for d in os.environ.get("PATH", "").split(os.pathsep))


def test_capture_bundle_archive_holds_every_command_file_plain_file_and_sys(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dest = tmp_path / "bundle.tar.gz"
    result = run_module(monkeypatch, capsys, "capture_bundle", dest=str(dest))
    assert result["changed"] is True
    assert [c["file"] for c in result["commands"]] == [c.filename for c in CAPTURE_COMMANDS]
    with tarfile.open(dest) as tar:
        assert all(m.isfile() or m.isdir() for m in tar.getmembers())
        tar.extractall(tmp_path / "unpacked", filter="data")
    bundle = tmp_path / "unpacked"
    for cmd, record in zip(CAPTURE_COMMANDS, result["commands"], strict=True):
        command_line, output = parse_capture_file((bundle / cmd.filename).read_text(), name=cmd.filename)
        assert (command_line, output.rc) == (" ".join(cmd.argv), record["rc"])
    assert result["files"] == list(CAPTURE_FILES)
    assert (bundle / "os-release").read_bytes() == Path("/etc/os-release").read_bytes()
    assert (bundle / "sys/devices/system/node/node0/cpulist").is_file()
    assert result["sysfs"]["files"] == sum(1 for p in (bundle / "sys").rglob("*") if p.is_file())


def test_capture_bundle_missing_tool_gets_the_rc_127_frame(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    if _installed("nvidia-smi"):
        pytest.skip("nvidia-smi is installed here")
    dest = tmp_path / "bundle.tar.gz"
    run_module(monkeypatch, capsys, "capture_bundle", dest=str(dest), sysfs=False)
    with tarfile.open(dest) as tar:
        member = tar.extractfile("nvidia-smi-q.xml")
        assert member is not None
        text = member.read().decode()
        assert not any(m.name.split("/")[0] == "sys" for m in tar.getmembers())
    assert text == "# $ nvidia-smi -q -x\nsh: nvidia-smi: command not found\n# rc=127\n"


def test_capture_bundle_check_mode_probes_and_writes_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dest = tmp_path / "bundle.tar.gz"
    result = run_module(
        monkeypatch, capsys, "capture_bundle", dest=str(dest), sysfs=False, _ansible_check_mode=True
    )
    assert result["changed"] is True
    assert len(result["commands"]) == len(CAPTURE_COMMANDS)
    assert not dest.exists()


def test_capture_bundle_without_dest_only_probes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_module(monkeypatch, capsys, "capture_bundle", sysfs=False)
    assert result["changed"] is False
    assert result["sysfs"] == {"entries": 0, "files": 0}


def test_capture_bundle_unwritable_dest_fails_with_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run_module(
        monkeypatch, capsys, "capture_bundle", dest=str(tmp_path / "no/such/a.tar.gz"), sysfs=False
    )
    assert result["failed"] is True
    assert result["msg"].startswith("Could not write the capture archive")
