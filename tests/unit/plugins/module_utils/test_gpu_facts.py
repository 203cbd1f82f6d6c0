"""The PCI scan fallback and gather_gpu: sources, fallbacks, errors, NVSwitch detection."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    CommandOutput,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu import gather_gpu
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_pci_scan import (
    pcie_gen,
    scan_pci_gpus,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_values import normalize_bus_id
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureSource

from .gpu_facts_inputs import (
    H100X8,
    H200_UUID,
    RTX4090X8,
    FakeSource,
    hgx_nvlink,
    hgx_topo,
    remove_nvidia_smi,
    writable_capture,
)

# --- PCI scan --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("speed", "gen"),
    [
        ("2.5 GT/s PCIe", 1),
        ("5.0 GT/s PCIe", 2),
        ("8.0 GT/s PCIe", 3),
        ("16.0 GT/s PCIe", 4),
        ("32.0 GT/s PCIe\n", 5),
        ("64.0 GT/s PCIe", 6),
        ("8 GT/s", 3),
        ("Unknown", None),
        ("", None),
        (None, None),
    ],
)
def test_pcie_gen_maps_sysfs_speed_to_generation(speed: str | None, gen: int | None) -> None:
    assert pcie_gen(speed) == gen


@pytest.mark.parametrize(
    ("bus_id", "expected"),
    [
        ("00000000:19:00.0", "0000:19:00.0"),
        ("00000000:DB:00.0", "0000:db:00.0"),
        ("0000:00:06.0", "0000:00:06.0"),
    ],
)
def test_normalize_bus_id_gives_sysfs_form(bus_id: str, expected: str) -> None:
    assert normalize_bus_id(bus_id) == expected


def test_scan_pci_gpus_h200x1_finds_one_gpu(h200x1: Path) -> None:
    gpus = scan_pci_gpus(CaptureSource(h200x1))
    assert len(gpus) == 1  # the Intel host bridge 0000:00:00.0 is skipped
    gpu = gpus[0]
    assert (gpu["index"], gpu["bus_id"], gpu["pci_device_id"], gpu["name"]) == (
        0,
        "0000:00:06.0",
        "0x2335",
        "NVIDIA 0x2335",
    )
    assert gpu["pcie"] == {
        "gen_current": 5,
        "gen_max": 5,
        "gen_max_device": None,  # sysfs has no device/host split
        "gen_max_host": None,
        "width_current": 16,
        "width_max": 16,
    }
    assert gpu["numa_node"] is None  # sysfs numa_node is -1 in this VM
    assert gpu["cpu_affinity"] == "0-15"
    assert (gpu["uuid"], gpu["vbios"], gpu["memory_total_mib"], gpu["ecc_errors"]) == (None, None, None, None)


# --- gather_gpu ------------------------------------------------------------------------------


def test_gather_gpu_h200x1_uses_xml_topo_and_nvlink(h200x1: Path) -> None:
    facts = gather_gpu(CaptureSource(h200x1))
    assert facts["available"] is True
    assert facts["source"] == "nvidia-smi-xml"
    assert facts["driver_loaded"] is True
    assert facts["sources"] == ["nvidia-smi -q -x", "nvidia-smi topo -m", "nvidia-smi nvlink -s"]
    assert facts["count"] == 1
    gpu = facts["gpus"][0]
    assert gpu["uuid"] == H200_UUID
    assert (gpu["numa_node"], gpu["cpu_affinity"]) == (0, "0-15")
    assert (gpu["nvlinks"], gpu["nvlink_source"]) == ([], "nvidia-smi nvlink -s")
    assert facts["topology"] == {"gpus": ["GPU0"], "links": {"GPU0": {}}, "nics": [], "nic_names": {}}
    assert facts["nvswitch"] is False


def test_gather_gpu_without_xml_falls_back_to_text(h200x1: Path, tmp_path: Path) -> None:
    capture = writable_capture(h200x1, tmp_path)
    # Edit: the capture lacks the XML file (as an old capture or a ticket paste would).
    (capture / "nvidia-smi-q.xml").unlink()
    facts = gather_gpu(CaptureSource(capture))
    assert facts["source"] == "nvidia-smi-text"
    assert facts["sources"][0] == "nvidia-smi -q"
    assert facts["gpus"] == gather_gpu(CaptureSource(h200x1))["gpus"]


def test_gather_gpu_nvidia_smi_missing_with_sysfs_scans_pci(h200x1: Path, tmp_path: Path) -> None:
    capture = writable_capture(h200x1, tmp_path)
    remove_nvidia_smi(capture)
    facts = gather_gpu(CaptureSource(capture))
    assert facts["available"] is True
    assert facts["source"] == "pci-scan"
    assert facts["driver_loaded"] is False
    assert facts["reason"].startswith("nvidia-smi not found")
    assert facts["driver_version"] is None and facts["topology"] is None
    assert facts["count"] == 1
    assert facts["gpus"][0]["bus_id"] == "0000:00:06.0"
    assert facts["gpus"][0]["name"] == "NVIDIA 0x2335"


def test_gather_gpu_nvidia_smi_missing_no_pci_gpu_is_unavailable(h200x1: Path, tmp_path: Path) -> None:
    capture = writable_capture(h200x1, tmp_path)
    remove_nvidia_smi(capture)
    # Edit: remove the GPU from the sysfs mirror; only the Intel host bridge stays.
    shutil.rmtree(capture / "sys/bus/pci/devices/0000:00:06.0")
    facts = gather_gpu(CaptureSource(capture))
    assert facts["available"] is False
    assert facts["source"] == "none"
    assert facts["reason"] == "nvidia-smi not found and no NVIDIA PCI devices in sysfs"
    assert (facts["count"], facts["gpus"]) == (0, [])


def test_gather_gpu_driver_failure_reports_the_error() -> None:
    # nvidia-smi installed but the kernel module is not loaded: rc 9 and NVML's message.
    failing = CommandOutput(
        rc=9, stdout="NVIDIA-SMI has failed because it couldn't communicate with the driver.\n"
    )
    facts = gather_gpu(FakeSource({("nvidia-smi", "-q", "-x"): failing, ("nvidia-smi", "-q"): failing}))
    assert facts["available"] is False
    assert facts["reason"].startswith("nvidia-smi failed (rc=9: NVIDIA-SMI has failed")


def test_gather_gpu_truncated_text_raises_naming_the_source(public: Path) -> None:
    text = (public / H100X8).read_text()
    # Edit: cut the output just before the 8th GPU section.
    source = FakeSource({("nvidia-smi", "-q"): CommandOutput(0, text[: text.index("GPU 00000000:DB:00.0")])})
    with pytest.raises(FactsError, match=r"^fake host: nvidia-smi -q: 'Attached GPUs: 8' but 7"):
        gather_gpu(source)


def test_gather_gpu_broken_capture_file_raises_facts_error(h200x1: Path, tmp_path: Path) -> None:
    capture = writable_capture(h200x1, tmp_path)
    # Edit: drop the "# rc=0" footer, as an interrupted `gpurack capture` would.
    xml = capture / "nvidia-smi-q.xml"
    xml.write_text(xml.read_text().rsplit("# rc=", 1)[0])
    with pytest.raises(FactsError, match=r"nvidia-smi-q\.xml: last line must be"):
        gather_gpu(CaptureSource(capture))


def test_gather_gpu_hgx_text_topo_nvlink_sets_nvswitch(public: Path) -> None:
    source = FakeSource(
        {
            ("nvidia-smi", "-q"): CommandOutput(0, (public / H100X8).read_text()),
            ("nvidia-smi", "topo", "-m"): CommandOutput(0, hgx_topo()),
            ("nvidia-smi", "nvlink", "-s"): CommandOutput(0, hgx_nvlink()),
        }
    )
    facts = gather_gpu(source)
    assert facts["source"] == "nvidia-smi-text"
    assert facts["nvswitch"] is True
    assert facts["topology"]["nic_names"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    assert "affinity" not in facts["topology"]
    gpus = facts["gpus"]
    assert [gpu["numa_node"] for gpu in gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert [sum(link["active"] for link in gpu["nvlinks"]) for gpu in gpus] == [
        18,
        18,
        18,
        16,
        18,
        18,
        18,
        18,
    ]


def test_gather_gpu_pcie_box_without_fabric_or_mesh_is_not_nvswitch(public: Path) -> None:
    # nvlink -s prints nothing on GPUs without NVLink (RTX 4090); no topo -m in this fake.
    source = FakeSource(
        {
            ("nvidia-smi", "-q"): CommandOutput(0, (public / RTX4090X8).read_text()),
            ("nvidia-smi", "nvlink", "-s"): CommandOutput(0, ""),
        }
    )
    facts = gather_gpu(source)
    assert facts["nvswitch"] is False
    assert facts["topology"] is None
    assert all(gpu["nvlinks"] == [] for gpu in facts["gpus"])


def test_gather_gpu_topo_gpu_count_mismatch_raises(public: Path) -> None:
    # Edit: topo -m of the 1-GPU H200 against the 8-GPU nvidia-smi -q.
    topo = "\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-15\t0\n"
    source = FakeSource(
        {
            ("nvidia-smi", "-q"): CommandOutput(0, (public / H100X8).read_text()),
            ("nvidia-smi", "topo", "-m"): CommandOutput(0, topo),
        }
    )
    with pytest.raises(FactsError, match="1 GPU rows but nvidia-smi -q lists 8 GPUs"):
        gather_gpu(source)
