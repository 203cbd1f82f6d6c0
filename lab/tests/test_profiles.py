"""Lab profiles: resolution, assignment and assembly over the real captures (no Docker)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    CAPTURE_COMMANDS,
    parse_capture_file,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu import gather_gpu
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nic import gather_nic
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureSource
from gpurack.errors import UsageError
from gpurack_lab import profiles

OS_RELEASE = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n'
UNAME = "Linux lab-w1 6.1.0-lab #1 SMP PREEMPT_DYNAMIC x86_64 GNU/Linux\n"


def assembled(name: str, tmp_path: Path) -> Path:
    return profiles.assemble(profiles.resolve(name), tmp_path / name, OS_RELEASE, UNAME)


def test_resolve_builtin_names_give_their_pool_groups() -> None:
    assert [profiles.resolve(n).group for n in profiles.BUILTIN_PROFILES] == [
        "lab_h200x1",
        "lab_hgx_h100x8_ib",
        "lab_cpu_only",
    ]


def test_resolve_capture_folder_is_custom(h200x1: Path, tmp_path: Path) -> None:
    folder = shutil.copytree(h200x1, tmp_path / "site-node-07")
    profile = profiles.resolve(str(folder))
    assert (profile.name, profile.builtin, profile.group) == ("site-node-07", False, "lab_custom")


@pytest.mark.parametrize("spec", ["h100", "/nonexistent", "."])
def test_resolve_unknown_spec_raises_usage_error(spec: str) -> None:
    with pytest.raises(UsageError, match="unknown profile"):
        profiles.resolve(spec)


def test_assign_defaults_to_h200x1_and_repeats_the_last() -> None:
    assert [p.name for p in profiles.assign([], 2)] == ["h200x1", "h200x1"]
    assert [p.name for p in profiles.assign(["hgx-h100x8-ib", "cpu-only"], 3)] == [
        "hgx-h100x8-ib",
        "cpu-only",
        "cpu-only",
    ]


def test_assign_more_profiles_than_workers_raises() -> None:
    with pytest.raises(UsageError, match="2 profiles given for 1 workers"):
        profiles.assign(["h200x1", "cpu-only"], 1)


def test_assemble_hgx_frames_every_capture_command(tmp_path: Path) -> None:
    folder = assembled("hgx-h100x8-ib", tmp_path)
    for command in CAPTURE_COMMANDS:
        line, _ = parse_capture_file((folder / command.filename).read_text())
        assert line == " ".join(command.argv)
    _, xml = parse_capture_file((folder / "nvidia-smi-q.xml").read_text())
    assert xml.rc == 127
    assert (folder / "os-release").read_text() == OS_RELEASE
    assert (folder / "sys/class/infiniband/mlx5_0/ports/1/rate").is_file()


def test_assemble_hgx_replays_eight_h100_and_eight_ib_ports(tmp_path: Path) -> None:
    source = CaptureSource(assembled("hgx-h100x8-ib", tmp_path))
    gpu = gather_gpu(source)
    assert (gpu["source"], gpu["count"]) == ("nvidia-smi-text", 8)
    assert {g["name"] for g in gpu["gpus"]} == {"NVIDIA H100 80GB HBM3"}
    ib = [p for p in gather_nic(source)["rdma"] if p["link_layer"] == "InfiniBand"]
    assert len(ib) == 8
    assert {p["rate_gbps"] for p in ib} == {400}


def test_assemble_cpu_only_has_no_gpu(tmp_path: Path) -> None:
    gpu = gather_gpu(CaptureSource(assembled("cpu-only", tmp_path)))
    assert (gpu["available"], gpu["count"]) == (False, 0)


def test_assemble_copy_does_not_touch_the_source(h200x1: Path, tmp_path: Path) -> None:
    folder = assembled("h200x1", tmp_path)
    (folder / "nvidia-smi-q.txt").write_text("edited")
    assert (h200x1 / "nvidia-smi-q.txt").read_text() != "edited"
    assert (folder / profiles.PROVENANCE_FILE).is_file()
