"""Unit tests for the gpu_facts module: main() end to end, with arguments patched in."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from ansible.module_utils import basic
from ansible_collections.gpurack.bootstrap.plugins.modules import gpu_facts


@pytest.fixture
def no_nvidia_smi() -> Iterator[mock.MagicMock]:
    """nvidia-smi is not on PATH; nothing else may be run."""
    with (
        mock.patch.object(basic.AnsibleModule, "get_bin_path", return_value=None) as get_bin_path,
        mock.patch.object(basic.AnsibleModule, "run_command", side_effect=AssertionError("ran a command")),
    ):
        yield get_bin_path


def _run_module(args: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """Run gpu_facts.main() the way AnsiballZ would, and return its JSON result."""
    # ansible-core 2.19 reads arguments and their serialization profile from these globals.
    payload = json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode()
    with (
        mock.patch.object(basic, "_ANSIBLE_ARGS", payload),
        mock.patch.object(basic, "_ANSIBLE_PROFILE", "legacy"),
        pytest.raises(SystemExit),
    ):
        gpu_facts.main()
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def test_gpu_facts_h200x1_capture_returns_facts(h200x1: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _run_module({"root": str(h200x1)}, capsys)
    assert result.get("failed") is not True
    assert result["changed"] is False
    facts = result["ansible_facts"]["gpurack_gpu"]
    assert (facts["available"], facts["source"], facts["count"]) == (True, "nvidia-smi-xml", 1)
    assert facts["gpus"][0]["name"] == "NVIDIA H200"
    assert facts["gpus"][0]["uuid"] == "GPU-cf8daf37-ddce-01b6-79fe-9e7477c494b0"


def test_gpu_facts_check_mode_returns_same_facts(h200x1: Path, capsys: pytest.CaptureFixture[str]) -> None:
    normal = _run_module({"root": str(h200x1)}, capsys)
    checked = _run_module({"root": str(h200x1), "_ansible_check_mode": True}, capsys)
    assert checked["changed"] is False
    assert checked["ansible_facts"] == normal["ansible_facts"]


@pytest.mark.usefixtures("no_nvidia_smi")
def test_gpu_facts_empty_root_without_nvidia_smi_is_unavailable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _run_module({"root": str(tmp_path)}, capsys)
    assert result.get("failed") is not True
    facts = result["ansible_facts"]["gpurack_gpu"]
    assert facts["available"] is False
    assert facts["reason"] == "nvidia-smi not found and no NVIDIA PCI devices in sysfs"


# The runner (rc 127 for a missing tool, argv as a list) is tested once, for every facts
# module, in test_facts_modules.py (make_runner).


def test_gpu_facts_truncated_capture_fails_with_clear_msg(
    h200x1: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capture = tmp_path / "capture"
    shutil.copytree(h200x1, capture)
    xml = capture / "nvidia-smi-q.xml"
    xml.chmod(0o644)
    # Edit: keep the capture frame but cut the XML document in half (closing tags lost).
    lines = xml.read_text().splitlines(keepends=True)
    xml.write_text("".join(lines[: len(lines) // 2]) + "# rc=0\n")
    result = _run_module({"root": str(capture)}, capsys)
    assert result["failed"] is True
    assert result["msg"].startswith(
        f"Could not read GPU facts: capture {capture}: nvidia-smi -q -x: XML does not parse"
    )
    assert "Traceback" not in json.dumps(result)


def test_gpu_facts_capture_link_out_of_the_bundle_fails_naming_the_file(
    h200x1: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capture = tmp_path / "capture"
    shutil.copytree(h200x1, capture)
    secret = tmp_path / "shadow"
    secret.write_text("TOPSECRET root:$6$hash\n")
    (capture / "nvidia-smi-q.xml").unlink()
    (capture / "nvidia-smi-q.xml").symlink_to(secret)
    result = _run_module({"root": str(capture)}, capsys)
    assert result["failed"] is True
    assert f"{capture}/nvidia-smi-q.xml: is a link that leaves the capture bundle" in result["msg"]
    assert "TOPSECRET" not in json.dumps(result)


def test_gpu_facts_capture_with_undecodable_bytes_warns_naming_the_file(
    h200x1: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capture = tmp_path / "capture"
    shutil.copytree(h200x1, capture)
    xml = capture / "nvidia-smi-q.xml"
    xml.chmod(0o644)
    xml.write_bytes(xml.read_bytes().replace(b"NVIDIA H200", b"NVIDIA H\xff200", 1))
    # Patched, not read from the result: ansible-core keeps warnings in process-wide state.
    with mock.patch.object(basic.AnsibleModule, "warn") as warn:
        result = _run_module({"root": str(capture)}, capsys)
    assert result.get("failed") is not True
    warned = [call.args[0] for call in warn.call_args_list]
    assert any(f"{capture}/nvidia-smi-q.xml: 1 undecodable byte sequence(s)" in w for w in warned)
