"""Quick-tier RDMA, NUMA, NVMe, OS and PCIe checks over hand-built facts, and malformed facts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi_text import (
    parse_nvidia_smi_text,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci import (
    downgraded_bus_ids,
    parse_lspci_vvv,
)

from .check_builders import (
    EXPECT,
    by_id,
    failing,
    gpu,
    node,
    port,
    run_checks,
)


def test_gpu_nic_numa_affinity_warns_when_no_local_port() -> None:
    facts = node()
    for p in facts["gpurack_nic"]["rdma"]:
        p["numa_node"] = 0
    results = by_id(run_checks(facts, EXPECT), "gpu.nic.numa_affinity")
    assert [r["verdict"] for r in results] == ["pass"] * 4 + ["warn"] * 4
    assert results[4]["reason"] == "GPU 4 (0000:59:00.0) is on NUMA node 1, no RDMA port is"


def test_gpu_nic_numa_affinity_unknown_skips() -> None:
    facts = node()
    for p in facts["gpurack_nic"]["rdma"]:
        p["numa_node"] = None
    [item] = by_id(run_checks(facts, EXPECT), "gpu.nic.numa_affinity")
    assert item["verdict"] == "skip"


def test_rdma_port_down_fails_naming_the_port() -> None:
    facts = node()
    facts["gpurack_nic"]["rdma"][5].update(state="DOWN", phys_state="Polling")
    [item] = failing(run_checks(facts, EXPECT))
    assert item["id"] == "rdma.ports.state"
    assert item["component"] == "mlx5_5 port 1"
    assert item["reason"] == "mlx5_5 port 1 is DOWN/Polling, expected ACTIVE/LinkUp"


def test_rdma_slow_port_and_missing_ports_fail() -> None:
    facts = node(ports=7)
    facts["gpurack_nic"]["rdma"][0]["rate_gbps"] = 200
    bad = failing(run_checks(facts, EXPECT))
    assert {(r["id"], r["component"]) for r in bad} == {
        ("rdma.ports.rate", "mlx5_0 port 1"),
        ("rdma.ports.count", "node"),
        ("rdma.ports.link_layer", "node"),
    }


def test_rdma_storage_roce_ports_do_not_count_against_infiniband() -> None:
    facts = node()
    facts["gpurack_nic"]["rdma"].append(port(8, link_layer="Ethernet", state="DOWN", rate_gbps=100))
    assert not failing(run_checks(facts, EXPECT))
    [item] = by_id(run_checks(facts, EXPECT), "rdma.ports.link_layer")
    assert item["measured"] == {"InfiniBand": 8, "Ethernet": 1}


def test_rdma_roce_node_expecting_infiniband_fails_link_layer() -> None:
    facts = node()
    for p in facts["gpurack_nic"]["rdma"]:
        p["link_layer"] = "Ethernet"
    [item] = by_id(run_checks(facts, EXPECT), "rdma.ports.link_layer")
    assert (item["verdict"], item["reason"]) == ("fail", "0 RDMA ports use InfiniBand, expected 8")


def test_numa_and_nvme_counts_compare_with_expectation() -> None:
    facts = node()
    facts["gpurack_numa"]["count"] = 8
    facts["gpurack_nvme"]["disks"].pop()
    bad = {r["id"]: r["reason"] for r in failing(run_checks(facts, EXPECT))}
    assert bad == {
        "numa.nodes": "8 NUMA nodes found, expected 2",
        "nvme.count": "7 NVMe data disks found, expected 8",
    }


def test_os_cgroup_v1_warns_without_expectation_fails_with_it() -> None:
    facts = node()
    facts["gpurack_os"]["cgroup_version"] = 1
    assert by_id(run_checks(facts, {}), "os.cgroup_v2")[0]["verdict"] == "warn"
    assert by_id(run_checks(facts, {"os": {"cgroup_version": 2}}), "os.cgroup_v2")[0]["verdict"] == "fail"
    assert by_id(run_checks(facts, {"os": {"cgroup_version": 1}}), "os.cgroup_v2")[0]["verdict"] == "pass"


def test_os_nouveau_loaded_fails() -> None:
    facts = node()
    facts["gpurack_os"]["modules"]["nouveau"] = True
    [item] = failing(run_checks(facts, {}))
    assert item["id"] == "os.nouveau_absent"
    assert "blacklist nouveau" in item["remediation"]


def test_pci_downgraded_link_warns_with_link_details() -> None:
    facts = node()
    facts["gpurack_pci"]["devices"][0]["upstream"] = "0000:05:00.0"  # the bridge above GPU 0
    facts["gpurack_pci"]["devices"].append(
        {
            "bus_id": "0000:05:00.0",
            "description": "PCI bridge",
            "vendor_id": "0x1000",
            "device_id": "0xc030",
            "class_id": "0x0604",
            "numa_node": 0,
            "link": {
                "cap_speed_gts": 32.0,
                "cap_width": 16,
                "sta_speed_gts": 16.0,
                "sta_width": 16,
                "speed_downgraded": True,
                "width_downgraded": False,
            },
        }
    )
    facts["gpurack_pci"]["downgraded"] = ["0000:05:00.0"]
    [item] = by_id(run_checks(facts, {}), "pci.downgraded")
    assert item["verdict"] == "warn"
    assert item["component"] == "PCI 0000:05:00.0"
    assert item["reason"] == "PCI 0000:05:00.0 (PCI bridge) links at 16.0 GT/s x16, capable of 32.0 GT/s x16"


def test_pci_downgraded_link_off_the_gpu_rdma_nvme_paths_is_information() -> None:
    facts = node(gpus=1)
    facts["gpurack_pci"]["devices"].append(
        {
            "bus_id": "0000:01:00.0",
            "description": "Ethernet controller: Broadcom Inc. and subsidiaries NetXtreme BCM5720",
            "vendor_id": "0x14e4",
            "device_id": "0x165f",
            "class_id": "0x0200",
            "numa_node": 0,
            "link": {"cap_speed_gts": 5.0, "cap_width": 2, "sta_speed_gts": 5.0, "sta_width": 1},
            "upstream": None,
        }
    )
    facts["gpurack_pci"]["downgraded"] = ["0000:01:00.0"]
    [item] = by_id(run_checks(facts, {}), "pci.downgraded")
    assert (item["verdict"], item["component"]) == ("pass", "PCI 0000:01:00.0")
    assert item["reason"].endswith("not on a GPU, RDMA or NVMe path: information only")
    assert "x1" in item["reason"] and item["remediation"] is None


def _h100_facts(public: Path) -> dict[str, Any]:
    """The 8x H100 public captures: nvidia-smi -q text and lspci -vvv of an HGX H100 board."""
    parsed = parse_nvidia_smi_text((public / "nvidia-smi-q.535.161.08.h100x8").read_text())
    devices = parse_lspci_vvv((public / "lspci-vvv.hgx-h100").read_text())
    return {
        "gpurack_gpu": {"available": True, "source": "nvidia-smi-text", **parsed},
        "gpurack_pci": {
            "available": True,
            "source": "lspci-vvv",
            "devices": devices,
            "downgraded": downgraded_bus_ids(devices),
        },
    }


def test_h100x8_downgraded_platform_links_are_information_only(public: Path) -> None:
    facts = _h100_facts(public)
    assert len(facts["gpurack_pci"]["downgraded"]) == 16  # the healthy profile's 16 former warnings
    results = by_id(run_checks(facts, {}), "pci.downgraded")
    assert len(results) == 16
    assert [r for r in results if r["verdict"] != "pass"] == []
    assert all(r["reason"].endswith("information only") for r in results)
    assert "PCI 0000:01:00.0" in {r["component"] for r in results}  # the onboard BMC NIC


def test_h100x8_downgraded_gpu_link_and_its_switch_still_warn(public: Path) -> None:
    facts = _h100_facts(public)
    devices = {d["bus_id"]: d for d in facts["gpurack_pci"]["devices"]}
    gpu, switch = devices["0000:19:00.0"], devices["0000:17:01.0"]  # GPU 0 and its switch port
    assert gpu["upstream"] == "0000:17:01.0"
    for device in (gpu, switch):
        device["link"] = {**device["link"], "sta_width": 8, "width_downgraded": True}
    facts["gpurack_pci"]["downgraded"] = downgraded_bus_ids(list(devices.values()))
    warned = {
        r["component"]: r for r in by_id(run_checks(facts, {}), "pci.downgraded") if r["verdict"] == "warn"
    }
    assert set(warned) == {"PCI 0000:19:00.0", "PCI 0000:17:01.0"}
    assert "x8" in warned["PCI 0000:19:00.0"]["reason"] and warned["PCI 0000:17:01.0"]["remediation"]


@pytest.mark.parametrize(
    ("model", "verdict"),
    [
        ("NVIDIA H200", "pass"),
        ("nvidia h200", "pass"),
        ("h200-141gb", "pass"),
        ("NVIDIA H200 NVL", "fail"),
        ("NVIDIA H100 80GB HBM3", "fail"),
    ],
)
def test_gpu_model_matches_name_or_label(model: str, verdict: str) -> None:
    results = by_id(run_checks(node(gpus=1), {"gpu": {"model": model}}), "gpu.model")
    assert [r["verdict"] for r in results] == [verdict]


def test_gpu_memory_below_minimum_fails() -> None:
    [item] = by_id(run_checks(node(gpus=1), {"gpu": {"min_memory_mib": 150000}}), "gpu.memory")
    assert (item["verdict"], item["unit"]) == ("fail", "MiB")
    assert item["reason"] == "GPU 0 (0000:19:00.0) has 143771 MiB, expected at least 150000 MiB"


def test_pci_scan_gpus_with_unknown_fields_skip_instead_of_failing() -> None:
    facts = node(gpus=2)
    blank = dict.fromkeys(gpu(), None)
    facts["gpurack_gpu"].update(source="pci-scan", driver_version=None, cuda_version=None)
    facts["gpurack_gpu"]["gpus"] = [
        {
            **blank,
            "index": i,
            "bus_id": gpu(i)["bus_id"],
            "name": "NVIDIA H200",
            "pci_device_id": "0x2335",
            "pcie": gpu(i)["pcie"],
        }
        for i in range(2)
    ]
    results = run_checks(facts, {"gpu": {"count": 2, "model": "NVIDIA H200"}})
    assert by_id(results, "gpu.count")[0]["verdict"] == "pass"
    assert by_id(results, "gpu.ecc.mode")[0]["verdict"] == "skip"
    assert by_id(results, "gpu.count")[0]["evidence"]["source"] == "sysfs /sys/bus/pci/devices"


def test_malformed_facts_skip_one_check_and_run_the_others() -> None:
    facts = node(gpus=1)
    facts["gpurack_gpu"]["gpus"][0]["memory_total_mib"] = "lots"
    results = run_checks(facts, EXPECT)
    [item] = by_id(results, "gpu.memory")
    assert item["verdict"] == "skip"
    assert item["reason"].startswith("could not evaluate the facts: TypeError")
    assert by_id(results, "gpu.ecc.mode")[0]["verdict"] == "pass"
