"""Quick-tier GPU and driver checks over hand-built facts."""

from __future__ import annotations

from typing import Any

import pytest

from .check_builders import (
    EXPECT,
    by_id,
    failing,
    node,
    run_checks,
)


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
