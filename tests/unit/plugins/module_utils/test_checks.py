"""Quick-tier checks over hand-built facts (docs/facts.md) and over the real captures."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_facts import gather_gpu
from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_models import find_model
from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_smi import parse_nvidia_smi_text
from ansible_collections.gpurack.bootstrap.plugins.module_utils._nic_facts import gather_nic
from ansible_collections.gpurack.bootstrap.plugins.module_utils._numa_facts import gather_numa
from ansible_collections.gpurack.bootstrap.plugins.module_utils._nvme_facts import gather_nvme
from ansible_collections.gpurack.bootstrap.plugins.module_utils._os_facts import gather_os
from ansible_collections.gpurack.bootstrap.plugins.module_utils._pci_facts import (
    downgraded_bus_ids,
    gather_pci,
    parse_lspci_vvv,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils._results import CheckResult, summarise
from ansible_collections.gpurack.bootstrap.plugins.module_utils._source import CaptureSource
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import COMPONENTS, ExpectError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import run_checks as _run_checks
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.spec import (
    FUNCTIONS,
    checks_for_tier,
    model_expected,
    specs,
)
from gpurack import docsgen

CATALOGUE = specs()
REGISTRY = FUNCTIONS


def run_checks(facts: Any, expect: Any = None, tier: str = "quick") -> list[dict[str, Any]]:
    """run_checks, its CheckResults in their JSON shape (what node_checks returns)."""
    results = _run_checks(facts, expect, tier)
    assert all(isinstance(r, CheckResult) for r in results)
    return [r.to_dict() for r in results]


RESULT_KEYS = {
    "id",
    "title",
    "tier",
    "component",
    "verdict",
    "measured",
    "expected",
    "unit",
    "reason",
    "remediation",
    "evidence",
    "limit_source",
    "percent",
    "duration_s",
    "details",
}


def gpu(index: int = 0, **over: Any) -> dict[str, Any]:
    """One healthy H200 SXM as gpu_facts reports it; keyword arguments replace fields."""
    entry: dict[str, Any] = {
        "index": index,
        "name": "NVIDIA H200",
        "architecture": "Hopper",
        "uuid": f"GPU-{index:08d}",
        "serial": f"16549240642{index:02d}",
        "bus_id": f"0000:{0x19 + 0x10 * index:02x}:00.0",
        "pci_device_id": "0x2335",
        "vbios": "96.00.A5.00.1E",
        "memory_total_mib": 143771,
        "pcie": {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16},
        "persistence_mode": True,
        "mig_mode": False,
        "ecc_mode": True,
        "ecc_errors": {
            "volatile_corrected": 0,
            "volatile_uncorrected": 0,
            "aggregate_corrected": 0,
            "aggregate_uncorrected": 0,
        },
        "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False},
        "retired_pages": {"single_bit": None, "double_bit": None, "pending": None},
        "recovery_action": "None",
        "clocks_event_reasons": ["idle"],
        "nvlinks": [{"link": n, "speed_gbps": 26.562, "active": True} for n in range(18)],
        "nvlink_source": "nvidia-smi nvlink -s",
        "numa_node": 0 if index < 4 else 1,
        "cpu_affinity": "0-55" if index < 4 else "56-111",
    }
    entry.update(over)
    return entry


def port(n: int, **over: Any) -> dict[str, Any]:
    """One healthy 400G InfiniBand port `mlx5_<n> port 1`."""
    entry: dict[str, Any] = {
        "device": f"mlx5_{n}",
        "port": 1,
        "state": "ACTIVE",
        "phys_state": "LinkUp",
        "rate_gbps": 400,
        "link_layer": "InfiniBand",
        "fw_ver": "28.41.1000",
        "board_id": "MT_0000000838",
        "hca_type": "MT4129",
        "node_guid": None,
        "port_guid": None,
        "numa_node": 0 if n < 4 else 1,
        "counters": {"symbol_error": 0},
    }
    entry.update(over)
    return entry


def node(gpus: int = 8, ports: int = 8) -> dict[str, Any]:
    """Facts of a healthy 8x H200 HGX node with 8 IB ports, as the facts modules return them."""
    return {
        "gpurack_gpu": {
            "available": True,
            "source": "nvidia-smi-xml",
            "sources": ["nvidia-smi -q -x"],
            "driver_version": "580.159.04",
            "cuda_version": "13.0",
            "count": gpus,
            "gpus": [gpu(i) for i in range(gpus)],
            "topology": None,
            "nvswitch": gpus > 1,
        },
        "gpurack_pci": {
            "available": True,
            "source": "lspci-vvv",
            "devices": [
                {
                    "bus_id": gpu(i)["bus_id"],
                    "description": "3D controller: NVIDIA Corporation Device 2335",
                    "vendor_id": "0x10de",
                    "device_id": "0x2335",
                    "class_id": "0x0302",
                    "numa_node": 0,
                    "link": None,
                }
                for i in range(gpus)
            ],
            "downgraded": [],
        },
        "gpurack_numa": {"available": True, "count": 2, "nodes": [{"id": 0, "cpulist": "0-55"}, {"id": 1}]},
        "gpurack_nic": {
            "available": True,
            "net": [{"name": "eth0"}],
            "rdma": [port(n) for n in range(ports)],
        },
        "gpurack_nvme": {
            "available": True,
            "source": "nvme-list",
            "disks": [{"name": f"nvme{n}n1", "is_os_disk": n == 0} for n in range(9)],
        },
        "gpurack_os": {
            "kernel": "6.8.0",
            "cgroup_version": 2,
            "modules": {"nouveau": False, "nvidia": True},
            "xid_events": [],
            "services": {"nvidia-fabricmanager": "active"},
        },
    }


EXPECT: dict[str, Any] = {
    "gpu": {
        "count": 8,
        "model": "NVIDIA H200",
        "min_memory_mib": 140000,
        "pcie": {"gen": 5, "width": 16},
        "nvlinks_per_gpu": 18,
    },
    "rdma": {"ports": 8, "rate_gbps": 400, "link_layer": "InfiniBand"},
    "numa_nodes": 2,
    "nvme": {"count": 8},
    "driver": {"branch": "580"},
    "cuda": {"version": "12.8"},
    "os": {"cgroup_version": 2},
}


def by_id(results: list[dict[str, Any]], check_id: str) -> list[dict[str, Any]]:
    return [r for r in results if r["id"] == check_id]


def failing(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in results if r["verdict"] == "fail"]


def test_run_checks_healthy_node_passes_every_quick_check() -> None:
    results = run_checks(node(), EXPECT)
    assert summarise(results)["verdict"] == "pass"
    assert {r["id"] for r in results} == {c.id for c in checks_for_tier("quick")}
    not_passed = {r["id"] for r in results if r["verdict"] != "pass"}
    assert not_passed == {"gpu.retired_pages.pending"}  # Hopper remaps rows: nothing to retire


def test_run_checks_results_have_the_shared_shape() -> None:
    for item in run_checks(node(), EXPECT) + run_checks({}, {}):
        assert set(item) == RESULT_KEYS
        assert item["verdict"] in ("pass", "warn", "fail", "skip")
        assert set(item["evidence"]) == {"source", "lines"}
        assert isinstance(item["evidence"]["lines"], list)
        if item["verdict"] == "skip":
            assert item["reason"]
        if item["verdict"] in ("warn", "fail"):
            assert item["reason"] and item["remediation"]


def test_registry_covers_every_quick_catalogue_entry() -> None:
    assert set(REGISTRY) == {c.id for c in CATALOGUE if c.tier == "quick"}


def test_summarise_counts_verdicts_and_fails_on_any_fail() -> None:
    results = [{"verdict": v} for v in ("pass", "pass", "warn", "skip", "fail")]
    assert summarise(results) == {"pass": 2, "warn": 1, "fail": 1, "skip": 1, "verdict": "fail"}
    # issue 12: a warn is a warn everywhere (the old _checks.summarise counted it as a pass).
    assert summarise([{"verdict": "warn"}])["verdict"] == "warn"


def test_run_checks_no_facts_skips_everything_with_reasons() -> None:
    results = run_checks({}, EXPECT)
    assert {r["verdict"] for r in results} == {"skip"}


def test_run_checks_without_expectations_skips_expectation_checks() -> None:
    results = run_checks(node(), {})
    assert by_id(results, "gpu.count")[0]["verdict"] == "skip"
    assert by_id(results, "gpu.count")[0]["reason"] == "not checked: gpurack_expect.gpu.count is not set"
    assert by_id(results, "gpu.count")[0]["measured"] == 8
    assert all(r["verdict"] == "pass" for r in by_id(results, "gpu.remapped_rows.pending"))


def test_run_checks_invalid_expect_raises_with_every_path() -> None:
    with pytest.raises(ExpectError) as info:
        run_checks(node(), {"gpu": {"count": "eight"}, "nope": 1})
    assert info.value.errors == [
        "gpurack_expect.gpu.count: expected a non-negative integer, got 'eight'",
        "gpurack_expect.nope: unknown key (known: gpu, rdma, numa_nodes, nvme, driver, cuda, os)",
    ]


def test_run_checks_unknown_tier_raises() -> None:
    with pytest.raises(ValueError, match="tier"):
        run_checks(node(), {}, tier="slow")


def test_run_checks_standard_tier_skips_measurements_it_cannot_take() -> None:
    results = run_checks(node(), EXPECT, tier="standard")
    assert by_id(results, "gpu.bf16_matmul")[0]["verdict"] == "skip"


def test_gpu_count_no_gpus_names_both_sources() -> None:
    facts = node()
    facts["gpurack_gpu"] = {
        "available": False,
        "reason": "nvidia-smi not found",
        "source": "none",
        "gpus": [],
    }
    facts["gpurack_pci"]["devices"] = []
    [item] = by_id(run_checks(facts, EXPECT), "gpu.count")
    assert item["verdict"] == "fail"
    assert item["reason"] == "no GPUs found (nvidia-smi not found and no NVIDIA PCI devices), expected 8"


def test_gpu_count_gpu_missing_from_nvidia_smi_names_its_bus_id() -> None:
    facts = node()
    del facts["gpurack_gpu"]["gpus"][3]
    [item] = by_id(run_checks(facts, EXPECT), "gpu.count")
    assert item["verdict"] == "fail"
    assert item["reason"] == "7 GPUs found, expected 8; on the PCI bus but not listed: 0000:49:00.0"


def test_gpu_pcie_width_x8_fails_naming_gpu_and_remedy() -> None:
    facts = node()
    facts["gpurack_gpu"]["gpus"][3]["pcie"]["width_current"] = 8
    results = run_checks(facts, EXPECT)
    bad = failing(results)
    assert {r["id"] for r in bad} == {"gpu.pcie.current_vs_max", "gpu.pcie.expected"}
    item = by_id(bad, "gpu.pcie.current_vs_max")[0]
    assert item["component"] == "GPU 3 (0000:49:00.0)"
    assert item["reason"] == "GPU 3 (0000:49:00.0) PCIe link runs at x8, its maximum is x16"
    assert item["measured"] == {"gen": 5, "width": 8}
    assert item["expected"] == {"gen": 5, "width": 16}
    assert "reseat" in item["remediation"]


def test_gpu_pcie_lower_gen_warns_as_idle_downshift() -> None:
    facts = node(gpus=1)
    facts["gpurack_gpu"]["gpus"][0]["pcie"]["gen_current"] = 1
    [item] = by_id(run_checks(facts, {}), "gpu.pcie.current_vs_max")
    assert item["verdict"] == "warn"


def test_gpu_pcie_expected_gen4_platform_fails() -> None:
    facts = node(gpus=1)
    facts["gpurack_gpu"]["gpus"][0]["pcie"].update(gen_max=4, gen_current=4)
    [item] = by_id(run_checks(facts, {"gpu": {"pcie": {"gen": 5}}}), "gpu.pcie.expected")
    assert item["verdict"] == "fail"
    assert "capable of Gen4 only, expected Gen5" in item["reason"]


def test_gpu_nvlink_inactive_link_fails() -> None:
    facts = node()
    facts["gpurack_gpu"]["gpus"][5]["nvlinks"][7] = {"link": 7, "speed_gbps": None, "active": False}
    [item] = failing(run_checks(facts, EXPECT))
    assert item["id"] == "gpu.nvlink.links"
    assert item["component"] == "GPU 5 (0000:69:00.0)"
    assert "NVLink 7 inactive (17 of 18 active)" in item["reason"]
    assert "17 active NVLinks, expected 18" in item["reason"]


def test_gpu_nvlink_no_data_skips() -> None:
    facts = node(gpus=1)
    facts["gpurack_gpu"]["gpus"][0].update(nvlinks=[], nvlink_source=None)
    [item] = by_id(run_checks(facts, EXPECT), "gpu.nvlink.links")
    assert item["verdict"] == "skip"


@pytest.mark.parametrize(
    ("counts", "verdict"),
    [
        ({"volatile_uncorrected": 2, "aggregate_uncorrected": 2}, "fail"),
        ({"aggregate_uncorrected": 1}, "warn"),
    ],
)
def test_gpu_ecc_uncorrected_volatile_fails_aggregate_warns(counts: dict[str, int], verdict: str) -> None:
    facts = node(gpus=1)
    facts["gpurack_gpu"]["gpus"][0]["ecc_errors"].update(counts)
    [item] = by_id(run_checks(facts, {}), "gpu.ecc.uncorrected")
    assert item["verdict"] == verdict


def test_gpu_ecc_disabled_fails_on_h200_warns_on_rtx4090() -> None:
    facts = node(gpus=2)
    facts["gpurack_gpu"]["gpus"][0]["ecc_mode"] = False
    facts["gpurack_gpu"]["gpus"][1].update(
        ecc_mode=False, name="NVIDIA GeForce RTX 4090", pci_device_id="0x2684"
    )
    assert [r["verdict"] for r in by_id(run_checks(facts, {}), "gpu.ecc.mode")] == ["fail", "warn"]


def test_gpu_remapped_rows_pending_fails_with_reset_remedy() -> None:
    facts = node()
    facts["gpurack_gpu"]["gpus"][2]["remapped_rows"]["pending"] = True
    [item] = failing(run_checks(facts, EXPECT))
    assert item["id"] == "gpu.remapped_rows.pending"
    assert item["reason"] == "GPU 2 (0000:39:00.0): a row remap is pending a GPU reset"
    assert "reset the GPU" in item["remediation"]


def test_gpu_remapped_rows_failure_asks_for_replacement() -> None:
    facts = node(gpus=1)
    facts["gpurack_gpu"]["gpus"][0]["remapped_rows"]["failure"] = True
    [item] = failing(run_checks(facts, {}))
    assert item["id"] == "gpu.remapped_rows.failure"
    assert "replace the GPU" in item["remediation"]


def test_gpu_retired_pages_unreported_skips() -> None:
    [item] = by_id(run_checks(node(gpus=1), {}), "gpu.retired_pages.pending")
    assert item["verdict"] == "skip"
    assert "Ampere" in item["reason"]


def _xid(code: int, bus: str = "PCI:0000:29:00") -> dict[str, Any]:
    return {"time": "[ 812.1]", "bus_id": bus, "xid": code, "pid": None, "process": None, "message": "x"}


def test_gpu_xid_79_fails_on_the_right_gpu_with_its_resolution() -> None:
    facts = node()
    facts["gpurack_os"]["xid_events"] = [_xid(79), _xid(79)]
    [item] = failing(run_checks(facts, EXPECT))
    assert item["id"] == "gpu.xid"
    assert item["component"] == "GPU 1 (0000:29:00.0)"
    assert "Xid 79 (GPU has fallen off the bus), 2 event(s)" in item["reason"]
    assert item["remediation"].startswith("drain the node and reset the GPU")
    assert "reseat" in item["remediation"]


@pytest.mark.parametrize(("code", "verdict"), [(43, "pass"), (94, "warn"), (48, "fail"), (9999, "warn")])
def test_gpu_xid_severity_sets_verdict(code: int, verdict: str) -> None:
    facts = node()
    facts["gpurack_os"]["xid_events"] = [_xid(code)]
    [item] = by_id(run_checks(facts, {}), "gpu.xid")
    assert item["verdict"] == verdict


def test_gpu_recovery_action_reboot_fails_with_reboot_remedy() -> None:
    facts = node(gpus=1)
    facts["gpurack_gpu"]["gpus"][0]["recovery_action"] = "Reboot"
    [item] = by_id(run_checks(facts, {}), "gpu.recovery_action")
    assert item["verdict"] == "fail"
    assert item["remediation"] == "drain the node and reboot it"


def test_gpu_clocks_power_brake_warns() -> None:
    facts = node(gpus=1)
    facts["gpurack_gpu"]["gpus"][0]["clocks_event_reasons"] = ["hw_slowdown", "hw_power_brake_slowdown"]
    [item] = by_id(run_checks(facts, {}), "gpu.clocks_event_reasons")
    assert item["verdict"] == "warn"
    assert "hw_power_brake_slowdown" in item["reason"]


def test_gpu_persistence_off_warns() -> None:
    facts = node(gpus=1)
    facts["gpurack_gpu"]["gpus"][0]["persistence_mode"] = False
    [item] = by_id(run_checks(facts, {}), "gpu.persistence")
    assert item["verdict"] == "warn"


@pytest.mark.parametrize(
    ("driver", "verdict"),
    [
        ({"branch": "580"}, "pass"),
        ({"branch": 570}, "fail"),
        ({"version": "580.159.04"}, "pass"),
        ({"version": "580.95.05"}, "fail"),
    ],
)
def test_driver_version_against_version_or_branch(driver: dict[str, Any], verdict: str) -> None:
    [item] = by_id(run_checks(node(), {"driver": driver}), "driver.version")
    assert item["verdict"] == verdict


def test_driver_version_no_driver_fails() -> None:
    facts = node()
    facts["gpurack_gpu"]["driver_version"] = None
    [item] = by_id(run_checks(facts, {"driver": {"branch": "580"}}), "driver.version")
    assert (item["verdict"], item["reason"]) == ("fail", "no NVIDIA driver is loaded")


@pytest.mark.parametrize(("want", "verdict"), [("12.8", "pass"), ("13.0", "pass"), ("13.1", "fail")])
def test_cuda_version_is_a_minimum(want: str, verdict: str) -> None:
    [item] = by_id(run_checks(node(), {"cuda": {"version": want}}), "cuda.version")
    assert item["verdict"] == verdict


def test_fabricmanager_inactive_on_nvswitch_fails_and_skips_without_nvswitch() -> None:
    facts = node()
    facts["gpurack_os"]["services"]["nvidia-fabricmanager"] = "inactive"
    assert by_id(run_checks(facts, {}), "fabricmanager")[0]["verdict"] == "fail"
    del facts["gpurack_os"]["services"]
    assert "not gathered" in by_id(run_checks(facts, {}), "fabricmanager")[0]["reason"]
    [item] = by_id(run_checks(node(gpus=1), {}), "fabricmanager")
    assert (item["verdict"], item["reason"]) == ("skip", "no NVSwitch: fabric manager is not needed")


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


# --- real captures ---------------------------------------------------------------------------

H200X1_EXPECT: dict[str, Any] = {
    "gpu": {"count": 1, "model": "NVIDIA H200", "min_memory_mib": 140000, "pcie": {"gen": 5, "width": 16}},
    "numa_nodes": 1,
}


def _writable_copy(src: Path, tmp_path: Path) -> Path:
    dest = tmp_path / src.name
    shutil.copytree(src, dest, copy_function=shutil.copyfile)
    for path in [dest, *dest.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return dest


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1))


def _capture_facts(root: Path) -> dict[str, Any]:
    source = CaptureSource(root)
    return {
        "gpurack_gpu": gather_gpu(source),
        "gpurack_pci": gather_pci(source),
        "gpurack_numa": gather_numa(source),
        "gpurack_nic": gather_nic(source),
        "gpurack_nvme": gather_nvme(source),
        "gpurack_os": gather_os(source),
    }


def test_h200x1_capture_passes_a_matching_expectation(h200x1: Path) -> None:
    results = run_checks(_capture_facts(h200x1), H200X1_EXPECT)
    assert not failing(results), failing(results)
    passed = {r["id"] for r in results if r["verdict"] == "pass"}
    assert {"gpu.count", "gpu.model", "gpu.memory", "gpu.pcie.expected", "numa.nodes", "gpu.xid"} <= passed
    assert summarise(results)["verdict"] == "pass"


def test_h200x1_capture_degraded_copy_fails_with_the_right_remediation(h200x1: Path, tmp_path: Path) -> None:
    root = _writable_copy(h200x1, tmp_path)
    _edit(
        root / "nvidia-smi-q.xml",
        "<current_link_width>16x</current_link_width>",
        "<current_link_width>8x</current_link_width>",
    )
    _edit(
        root / "nvidia-smi-q.xml",
        "<remapped_row_pending>No</remapped_row_pending>",
        "<remapped_row_pending>Yes</remapped_row_pending>",
    )
    _edit(
        root / "nvidia-smi-nvlink-s.txt",
        "# rc=0",
        "GPU 0: NVIDIA H200 (UUID: GPU-cf8daf37-ddce-01b6-79fe-9e7477c494b0)\n"
        "\t Link 0: 26.562 GB/s\n\t Link 1: <inactive>\n# rc=0",
    )
    _edit(
        root / "dmesg-nvrm.txt",
        "# rc=0",
        "[ 4242.000001] NVRM: Xid (PCI:0000:00:06): 79, pid='<unknown>', name=<unknown>, "
        "GPU has fallen off the bus.\n# rc=0",
    )
    bad = {r["id"]: r for r in failing(run_checks(_capture_facts(root), H200X1_EXPECT))}
    assert set(bad) == {
        "gpu.pcie.current_vs_max",
        "gpu.pcie.expected",
        "gpu.remapped_rows.pending",
        "gpu.nvlink.links",
        "gpu.xid",
    }
    assert all(r["component"] == "GPU 0 (0000:00:06.0)" for r in bad.values())
    assert bad["gpu.pcie.current_vs_max"]["measured"] == {"gen": 5, "width": 8}
    assert "reseat the GPU" in bad["gpu.pcie.current_vs_max"]["remediation"]
    assert "reset the GPU" in bad["gpu.remapped_rows.pending"]["remediation"]
    assert bad["gpu.nvlink.links"]["measured"] == {"active": 1, "inactive": [1]}
    assert "GPU has fallen off the bus" in bad["gpu.xid"]["reason"]
    assert "reseat the GPU" in bad["gpu.xid"]["remediation"]


def test_h100x8_text_flags_power_brake_and_passes_its_expectation(public: Path) -> None:
    parsed = parse_nvidia_smi_text((public / "nvidia-smi-q.535.161.08.h100x8").read_text())
    facts = {"gpurack_gpu": {"available": True, "source": "nvidia-smi-text", **parsed}}
    expect = {
        "gpu": {
            "count": 8,
            "model": "NVIDIA H100 80GB HBM3",
            "min_memory_mib": 80000,
            "pcie": {"gen": 5, "width": 16},
        },
        "driver": {"branch": "535"},
    }
    results = run_checks(copy.deepcopy(facts), expect)
    assert not failing(results), failing(results)
    warned = {r["id"] for r in results if r["verdict"] == "warn"}
    assert "gpu.clocks_event_reasons" in warned


# --- catalogue -------------------------------------------------------------------------------


def test_catalogue_ids_are_unique_and_tiers_known() -> None:
    ids = [c.id for c in CATALOGUE]
    assert len(ids) == len(set(ids))
    assert all(
        c.tier in ("quick", "standard", "burn-in") and c.limit_source and c.remediation for c in CATALOGUE
    )


def test_catalogue_standard_limits_come_from_the_model_table() -> None:
    h200 = find_model("NVIDIA H200")
    assert h200 is not None
    limits = {c.id: model_expected(c, h200) for c in CATALOGUE if c.tier == "standard"}
    assert limits == {
        "gpu.h2d_bandwidth": 50.412,
        "gpu.d2h_bandwidth": 50.412,
        "gpu.d2d_bandwidth": 3.6,
        "gpu.bf16_matmul": 742.05,
        "gpu.allreduce_busbw": 315.0,
        "counters.delta": None,
    }


def test_docs_checks_md_is_generated_from_the_catalogue() -> None:
    assert (docsgen.ROOT / docsgen.CHECKS_MD).read_text() == docsgen.checks_markdown()


def test_derived_files_are_what_the_specs_give() -> None:
    """docs/checks.md and the preflight argument spec: `python -m gpurack.docsgen` rewrites them."""
    assert docsgen.stale() == []
    assert docsgen.main(["--check"]) == 0


def test_docs_checks_md_states_the_verdict_rule() -> None:
    text = docsgen.checks_markdown()
    assert "\n## Verdicts\n" in text
    assert "a run's verdict is the same rule over its nodes' verdicts" in text
    assert "A `warn` never counts as a pass" in text


def test_every_spec_sits_in_its_component_module_and_schema_keys_come_from_specs() -> None:
    assert {c.component for c in CATALOGUE} == set(COMPONENTS)
    declared = {key.path for c in CATALOGUE for key in c.expects}
    assert "gpu.pcie.gen" in declared and "numa_nodes" in declared
    measured = [c for c in CATALOGUE if c.tier != "quick"]
    assert measured and all(c.id not in REGISTRY for c in measured)  # measured in gpubench
