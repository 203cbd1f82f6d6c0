"""Lab faults over the real captures: each edit is seen by the facts gatherers (no Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu import gather_gpu
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nic import gather_nic
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci import gather_pci
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureSource
from gpurack.errors import UsageError
from gpurack_lab import faults, profiles

UNAME = "Linux lab-w1 6.1.0-lab #1 SMP PREEMPT_DYNAMIC x86_64 GNU/Linux\n"


def faulted(profile: str, kind: faults.FaultKind, tmp_path: Path) -> tuple[Path, str]:
    folder = profiles.assemble(profiles.resolve(profile), tmp_path / profile, "ID=debian\n", UNAME)
    return folder, faults.apply(faults.Fault(kind, "lab-w1"), folder)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("gpu-missing@lab-w2", faults.Fault("gpu-missing", "lab-w2")),
        ("ib-port-down@x", faults.Fault("ib-port-down", "x")),
    ],
)
def test_parse_fault_valid_spec_gives_fault(spec: str, expected: faults.Fault) -> None:
    assert faults.parse_fault(spec) == expected


@pytest.mark.parametrize("spec", ["gpu-missing", "gpu-missing@", "fan-dead@lab-w1"])
def test_parse_fault_bad_spec_raises_usage_error(spec: str) -> None:
    with pytest.raises(UsageError):
        faults.parse_fault(spec)


@pytest.mark.parametrize(("profile", "count"), [("hgx-h100x8-ib", 7), ("h200x1", 0)])
def test_gpu_missing_drops_the_last_gpu_everywhere(profile: str, count: int, tmp_path: Path) -> None:
    folder, what = faulted(profile, "gpu-missing", tmp_path)
    gpu = gather_gpu(CaptureSource(folder))
    assert gpu["count"] == count
    assert "missing" in what


def test_gpu_missing_fixes_attached_gpus_in_text(public: Path) -> None:
    text = (public / "nvidia-smi-q.535.161.08.h100x8").read_text()
    edited, bus = faults.smi_text_drop_last_gpu(text)
    assert bus == "00000000:DB:00.0"
    assert "Attached GPUs                             : 7" in edited
    assert "GPU 00000000:DB:00.0" not in edited
    assert edited.count("Product Name") == 7


def test_ib_port_down_marks_first_port_down_in_sysfs_and_ibstat(tmp_path: Path) -> None:
    folder, what = faulted("hgx-h100x8-ib", "ib-port-down", tmp_path)
    ports = {p["device"]: p for p in gather_nic(CaptureSource(folder))["rdma"]}
    assert (ports["mlx5_0"]["state"], ports["mlx5_0"]["phys_state"]) == ("DOWN", "Disabled")
    assert ports["mlx5_1"]["state"] == "ACTIVE"
    ibstat = (folder / "ibstat.txt").read_text()
    assert ibstat.split("CA 'mlx5_1'")[0].count("State: Down") == 1
    assert what == "mlx5_0 port 1 down"


def test_ib_port_down_without_hca_raises(tmp_path: Path) -> None:
    with pytest.raises(faults.FaultError, match="no InfiniBand HCA"):
        faulted("h200x1", "ib-port-down", tmp_path)


@pytest.mark.parametrize("profile", ["hgx-h100x8-ib", "h200x1"])
def test_pcie_downgraded_narrows_gpu0_to_x8(profile: str, tmp_path: Path) -> None:
    folder, _ = faulted(profile, "pcie-downgraded", tmp_path)
    gpu0 = gather_gpu(CaptureSource(folder))["gpus"][0]
    assert (gpu0["pcie"]["width_current"], gpu0["pcie"]["width_max"]) == (8, 16)
    pci = gather_pci(CaptureSource(folder))
    assert gpu0["bus_id"] in pci["downgraded"]


def test_pcie_downgraded_marks_lspci_lnksta(tmp_path: Path) -> None:
    folder, _ = faulted("hgx-h100x8-ib", "pcie-downgraded", tmp_path)
    block = (folder / "lspci-vvv.txt").read_text().split("19:00.0 3D controller")[1].split("\n\n")[0]
    assert "Width x8 (downgraded)" in block


def test_cpu_only_rejects_gpu_faults(tmp_path: Path) -> None:
    with pytest.raises(faults.FaultError, match="no nvidia-smi"):
        faulted("cpu-only", "gpu-missing", tmp_path)
