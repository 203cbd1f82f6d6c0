"""gpurack capture on this machine (no GPU here) and over a fake sysfs tree."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    CAPTURE_COMMANDS,
    parse_capture_file,
)
from cli_helpers import invoke
from fake_sysfs import make_fake_root
from gpurack import capture


def _fake_root(root: Path) -> Path:
    return make_fake_root(root)


@pytest.fixture(scope="module")
def local_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real capture of this machine, shared by the tests that only read it."""
    out = tmp_path_factory.mktemp("capture") / "bundle"
    capture.capture(out)
    return out


def test_capture_writes_every_command_file_in_capture_format(local_capture: Path) -> None:
    for cmd in CAPTURE_COMMANDS:
        command_line, output = parse_capture_file((local_capture / cmd.filename).read_text())
        assert command_line == " ".join(cmd.argv)
        assert isinstance(output.rc, int)


def test_capture_missing_tool_gets_rc_127_frame(local_capture: Path) -> None:
    if any((Path(d) / "nvidia-smi").exists() for d in os.environ.get("PATH", "").split(os.pathsep)):
        pytest.skip("nvidia-smi is installed here")
    text = (local_capture / "nvidia-smi-q.xml").read_text()
    assert text == "# $ nvidia-smi -q -x\nsh: nvidia-smi: command not found\n# rc=127\n"


def test_capture_copies_os_release_and_mirrors_sysfs(local_capture: Path) -> None:
    assert (local_capture / "os-release").read_text() == Path("/etc/os-release").read_text()
    assert (local_capture / "sys/class/net").is_dir()
    assert (local_capture / "sys/devices/system/node/node0/cpulist").is_file()
    assert not any(p.is_symlink() for p in (local_capture / "sys").rglob("*"))


def test_capture_manifest_names_host_time_and_version(local_capture: Path) -> None:
    manifest = json.loads((local_capture / "capture.json").read_text())
    assert manifest["schema_version"] == 1
    assert manifest["host"]
    assert manifest["captured_at"]
    assert manifest["gpurack_version"]
    assert [c["file"] for c in manifest["commands"]] == [c.filename for c in CAPTURE_COMMANDS]


def test_capture_then_facts_reads_it_without_gpus(
    capsys: pytest.CaptureFixture[str], local_capture: Path
) -> None:
    result = invoke(capsys, "facts", "--from-capture", local_capture, "--format", "json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["facts"]["gpurack_gpu"]["available"] is False
    assert data["host"] == json.loads((local_capture / "capture.json").read_text())["host"]


def test_capture_cli_writes_bundle_and_summary(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    result = invoke(capsys, "capture", "--output", tmp_path / "out", "--root", _fake_root(tmp_path / "root"))
    assert result.code == 0, result.err
    assert "lspci -vvv" in result.out
    assert (tmp_path / "out/capture.json").is_file()


def test_capture_non_empty_output_exits_64(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("keep me\n")
    result = invoke(capsys, "capture", "--output", tmp_path)
    assert result.code == 64
    assert "--force" in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert (tmp_path / "old.txt").read_text() == "keep me\n"


def test_capture_force_writes_into_non_empty_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("x\n")
    capture.capture(out, root=_fake_root(tmp_path / "root"), force=True)
    assert (out / "uname.txt").is_file()


def test_capture_sysfs_keeps_only_nvidia_mellanox_and_nvme_pci(tmp_path: Path) -> None:
    out = tmp_path / "out"
    capture.capture(out, root=_fake_root(tmp_path / "root"))
    pci = out / "sys/bus/pci/devices"
    assert sorted(p.name for p in pci.iterdir()) == ["0000:00:06.0", "0000:00:07.0"]
    assert (pci / "0000:00:06.0/current_link_width").read_text() == "16\n"
    assert (pci / "0000:00:06.0").is_dir()
    assert not (pci / "0000:00:06.0").is_symlink()


def test_capture_sysfs_skips_binary_write_only_and_noise(tmp_path: Path) -> None:
    out = tmp_path / "out"
    capture.capture(out, root=_fake_root(tmp_path / "root"))
    gpu = out / "sys/bus/pci/devices/0000:00:06.0"
    assert not (gpu / "config").exists()
    assert not (gpu / "remove").exists()
    assert not (gpu / "power").exists()


def test_capture_sysfs_resolves_class_links_and_device_without_leaving_tree(tmp_path: Path) -> None:
    out = tmp_path / "out"
    capture.capture(out, root=_fake_root(tmp_path / "root"))
    eth0 = out / "sys/class/net/eth0"
    assert (eth0 / "mtu").read_text() == "1500\n"
    assert (eth0 / "device/vendor").read_text() == "0x10de\n"
    assert not (eth0 / "queue/deep").exists()  # below the depth cap
    assert not (out / "sys/class/net/evil").exists()
    assert (out / "os-release").read_text().startswith("ID=debian")
