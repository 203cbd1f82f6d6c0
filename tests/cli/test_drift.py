"""Drift between two snapshots of a host, over facts built from the real H200 capture; cabling drift."""

from __future__ import annotations

from typing import Any

import pytest
from gpurack.drift import Drift, diff, diff_links
from gpurack.hoststate import HostState, state_from_facts
from gpurack.records import LinkRecord
from inventory_helpers import REAL_SERIAL, capture_facts, hgx_facts, result


def _state(facts: dict[str, Any], results: list[dict[str, Any]] | None = None, **labels: str) -> HostState:
    return state_from_facts(facts, results or [], labels)


def _only(drifts: list[Drift]) -> Drift:
    assert len(drifts) == 1, [d.sentence for d in drifts]
    return drifts[0]


def test_state_from_facts_real_capture_reads_gpu_driver_kernel() -> None:
    state = _state(capture_facts())
    assert (state.driver, state.cuda, state.kernel) == ("580.159.04", "13.0", "6.18.44-fc-v657-gpu")
    (gpu,) = state.gpus
    assert (gpu.index, gpu.bus_id, gpu.serial, gpu.vbios) == (
        0,
        "0000:00:06.0",
        REAL_SERIAL,
        "96.00.A5.00.1E",
    )
    assert (gpu.pcie_gen_current, gpu.pcie_width_current, gpu.pcie_gen_max, gpu.pcie_width_max) == (
        5,
        16,
        5,
        16,
    )


@pytest.mark.parametrize("build", [capture_facts, hgx_facts])
def test_diff_same_facts_twice_no_drift(build: Any) -> None:
    results = [result("gpu.count", "pass")]
    assert diff(_state(build(), results, pool="a"), _state(build(), results, pool="a")) == []


def test_diff_real_capture_serial_swapped_one_sentence() -> None:
    after = capture_facts()
    after["gpurack_gpu"]["gpus"][0]["serial"] = "1654924064999"
    drift = _only(diff(_state(capture_facts()), _state(after)))
    assert drift.kind == "gpu_swapped"
    assert drift.sentence == "GPU 0 (0000:00:06.0) was swapped: serial 1654924064277 -> 1654924064999"


def test_diff_hgx_gpu3_swapped_reports_serial_only_once() -> None:
    after = hgx_facts()
    gpu = after["gpurack_gpu"]["gpus"][3]
    gpu["serial"], gpu["uuid"], gpu["vbios"] = (
        "1654924064999",
        "GPU-00000000-0000-0000-0000-000000000003",
        "96.00.B0",
    )
    drift = _only(diff(_state(hgx_facts()), _state(after)))
    assert drift.sentence == "GPU 3 (0000:3b:00.0) was swapped: serial 1654924064280 -> 1654924064999"
    assert (drift.component, drift.before, drift.after) == (
        "gpu:0000:3b:00.0",
        "1654924064280",
        "1654924064999",
    )


def test_diff_uuid_changed_without_serials_is_a_swap() -> None:
    before, after = hgx_facts(), hgx_facts()
    for facts in (before, after):
        facts["gpurack_gpu"]["gpus"][1]["serial"] = None
    after["gpurack_gpu"]["gpus"][1]["uuid"] = "GPU-new"
    assert _only(diff(_state(before), _state(after))).sentence.endswith(
        f"UUID {before['gpurack_gpu']['gpus'][1]['uuid']} -> GPU-new"
    )


def test_diff_width_16_to_8_one_downgraded_sentence() -> None:
    after = hgx_facts()
    after["gpurack_gpu"]["gpus"][5]["pcie"]["width_current"] = 8
    drift = _only(diff(_state(hgx_facts()), _state(after)))
    assert drift.kind == "pcie_downgraded"
    assert drift.sentence == "GPU 5 (0000:9b:00.0) PCIe link downgraded: Gen5 x16 -> Gen5 x8"


def test_diff_gen_dropped_is_downgrade_and_recovery_is_upgrade() -> None:
    low = hgx_facts()
    low["gpurack_gpu"]["gpus"][0]["pcie"]["gen_current"] = 3
    down = _only(diff(_state(hgx_facts()), _state(low)))
    up = _only(diff(_state(low), _state(hgx_facts())))
    assert down.sentence == "GPU 0 (0000:18:00.0) PCIe link downgraded: Gen5 x16 -> Gen3 x16"
    assert (up.kind, up.before, up.after) == ("pcie_upgraded", "Gen3 x16", "Gen5 x16")


def test_diff_gpu_missing_and_added() -> None:
    fewer = hgx_facts()
    del fewer["gpurack_gpu"]["gpus"][7]
    missing = _only(diff(_state(hgx_facts()), _state(fewer)))
    assert (
        missing.sentence == "GPU 7 (0000:db:00.0) is missing: NVIDIA H200 serial 1654924064284 no longer seen"
    )
    added = _only(diff(_state(fewer), _state(hgx_facts())))
    assert added.sentence == "GPU 7 (0000:db:00.0) was added: NVIDIA H200 serial 1654924064284"


def test_diff_same_serial_at_new_bus_id_is_a_move() -> None:
    after = hgx_facts()
    after["gpurack_gpu"]["gpus"][2]["bus_id"] = "0000:3c:00.0"
    drift = _only(diff(_state(hgx_facts()), _state(after)))
    assert drift.kind == "gpu_moved"
    assert drift.sentence == "GPU serial 1654924064279 moved: GPU 2 (0000:3a:00.0) -> GPU 2 (0000:3c:00.0)"


def test_diff_driverless_snapshot_is_not_a_swap() -> None:
    # Without a driver the gatherer falls back to a PCI scan: no serial, UUID, VBIOS or versions.
    after = hgx_facts()
    after["gpurack_gpu"]["driver_version"] = after["gpurack_gpu"]["cuda_version"] = None
    for gpu in after["gpurack_gpu"]["gpus"]:
        gpu["serial"] = gpu["uuid"] = gpu["vbios"] = None
    sentences = [d.sentence for d in diff(_state(hgx_facts()), _state(after))]
    assert sentences == ["NVIDIA driver changed: 580.159.04 -> none", "CUDA version changed: 13.0 -> none"]


def test_diff_software_versions_changed() -> None:
    after = hgx_facts()
    after["gpurack_gpu"]["driver_version"] = "580.170.01"
    after["gpurack_os"]["kernel"] = "6.8.0-60-generic"
    for gpu in after["gpurack_gpu"]["gpus"]:
        gpu["vbios"] = "96.00.A5.00.20"
    drifts = diff(_state(hgx_facts()), _state(after))
    kinds = [d.kind for d in drifts]
    assert kinds.count("vbios_changed") == 8
    assert "Kernel changed: 6.18.44-fc-v657-gpu -> 6.8.0-60-generic" in [d.sentence for d in drifts]
    assert "NVIDIA driver changed: 580.159.04 -> 580.170.01" in [d.sentence for d in drifts]
    assert drifts[0].sentence == "GPU 0 (0000:18:00.0) VBIOS changed: 96.00.A5.00.1E -> 96.00.A5.00.20"


def test_diff_nic_rate_state_and_firmware() -> None:
    after = hgx_facts()
    ports = after["gpurack_nic"]["rdma"]
    ports[2]["rate_gbps"] = 200
    ports[4]["state"], ports[4]["phys_state"] = "DOWN", "Polling"
    sentences = [d.sentence for d in diff(_state(hgx_facts()), _state(after))]
    assert sentences == [
        "NIC mlx5_2 port 1 rate changed: 400 Gb/s -> 200 Gb/s",
        "NIC mlx5_4 port 1 state changed: ACTIVE/LinkUp -> DOWN/Polling",
    ]
    for port in ports:
        port["fw_ver"] = "28.43.1014"
    fw = [d for d in diff(_state(hgx_facts()), _state(after)) if d.kind == "nic_firmware_changed"]
    assert len(fw) == 8
    assert fw[0].sentence == "NIC mlx5_0 firmware changed: 28.41.1000 -> 28.43.1014"


def test_diff_nic_missing_and_replaced() -> None:
    after = hgx_facts()
    del after["gpurack_nic"]["rdma"][7]
    after["gpurack_nic"]["rdma"][0]["port_guid"] = "0xa088c20300ffffff"
    sentences = [d.sentence for d in diff(_state(hgx_facts()), _state(after))]
    assert sentences == [
        "NIC mlx5_0 port 1 was replaced: GUID 0xa088c20300000000 -> 0xa088c20300ffffff",
        "NIC mlx5_7 port 1 is missing",
    ]


def test_diff_nvme_replaced_missing_added_and_renamed() -> None:
    replaced = hgx_facts()
    replaced["gpurack_nvme"]["disks"][1]["serial"] = "S6CKNA0TNEW001"
    assert _only(diff(_state(hgx_facts()), _state(replaced))).sentence == (
        "NVMe nvme1n1 was replaced: serial S6CKNA0T000001 -> S6CKNA0TNEW001 (SAMSUNG MZWLR3T8HCLS-00A07)"
    )
    gone = hgx_facts()
    del gone["gpurack_nvme"]["disks"][1]
    missing = _only(diff(_state(hgx_facts()), _state(gone)))
    assert (
        missing.sentence
        == "NVMe nvme1n1 is missing: SAMSUNG MZWLR3T8HCLS-00A07 serial S6CKNA0T000001 no longer seen"
    )
    assert _only(diff(_state(gone), _state(hgx_facts()))).kind == "disk_added"
    # Names follow probe order across boots: the same serials under swapped names are no change.
    renamed = hgx_facts()
    disks = renamed["gpurack_nvme"]["disks"]
    disks[0]["name"], disks[1]["name"] = "nvme1n1", "nvme0n1"
    assert diff(_state(hgx_facts()), _state(renamed)) == []


def test_diff_verdicts_changed_only_for_checks_in_both() -> None:
    before = [result("gpu.count", "pass"), result("gpu.pcie", "pass", "gpu5")]
    after = [
        result("gpu.count", "pass"),
        result("gpu.pcie", "fail", "gpu5", reason="x8 < x16"),
        result("nic.rate", "fail", "mlx5_0"),
    ]
    drift = _only(diff(_state(hgx_facts(), before), _state(hgx_facts(), after)))
    assert drift.kind == "verdict_changed"
    assert drift.sentence == "Check gpu.pcie on gpu5: pass -> fail (x8 < x16)"


def test_diff_label_changed() -> None:
    before = _state(hgx_facts(), None, **{"gpurack.io/validated": "true"})
    after = _state(hgx_facts(), None, **{"gpurack.io/validated": "false"})
    assert _only(diff(before, after)).sentence == "Label gpurack.io/validated changed: true -> false"


def test_state_from_facts_missing_facts_is_empty_not_error() -> None:
    state = state_from_facts({"gpurack_gpu": {"available": False, "reason": "no driver"}})
    assert state == HostState(None, None, None, (), (), (), (), ())


# -- where each NIC is cabled, between two fabric runs ---------------------------------------


def _on(nic: str, switch: str | None, port: str | None, neighbor: str | None = None) -> LinkRecord:
    return LinkRecord(nic, switch, port, neighbor)


def test_diff_links_moved_lost_and_found_sentences() -> None:
    before = [
        _on("mlx5_0", "leaf1", "Ethernet1/1", "gpu01 mlx5_0"),
        _on("mlx5_1", "leaf1", "Ethernet1/2"),
        _on("mlx5_2", None, None),
        _on("mlx5_3", "leaf1", "Ethernet1/3"),
        _on("mlx5_4", "leaf1", "Ethernet1/5"),
    ]
    after = [
        _on("mlx5_0", "leaf1", "Ethernet1/1", "gpu01.example mlx5_0"),  # another LLDP text only
        _on("mlx5_1", None, None),
        _on("mlx5_2", "leaf2", "Ethernet1/6"),
        _on("mlx5_3", "leaf2", "Ethernet1/7"),
        _on("mlx5_5", "leaf2", "Ethernet1/9"),
    ]
    drifts = diff_links(before, after)
    assert [(d.kind, d.sentence) for d in drifts] == [
        ("link_lost", "mlx5_1 is no longer seen on a switch (was leaf1 Ethernet1/2)"),
        ("link_found", "mlx5_2 is now seen on leaf2 Ethernet1/6"),
        ("link_moved", "mlx5_3 moved from leaf1 Ethernet1/3 to leaf2 Ethernet1/7"),
        ("link_found", "mlx5_5 is now seen on leaf2 Ethernet1/9"),
        ("link_lost", "mlx5_4 is no longer seen on a switch (was leaf1 Ethernet1/5)"),
        ("leaves_changed", "the node moved: seen on leaf1, leaf2, was on leaf1 (its leaf label follows)"),
    ]
    assert (drifts[-1].component, drifts[-1].before, drifts[-1].after) == ("leaves", "leaf1", "leaf1, leaf2")
    assert (drifts[2].component, drifts[2].before, drifts[2].after) == (
        "link:mlx5_3",
        "leaf1 Ethernet1/3",
        "leaf2 Ethernet1/7",
    )


def test_diff_links_same_ports_or_never_seen_is_no_drift() -> None:
    links = [_on("mlx5_0", "leaf1", "Ethernet1/1"), _on("mlx5_1", None, None)]
    assert diff_links(links, list(links)) == []
    assert diff_links([_on("mlx5_1", None, None)], []) == []
    assert diff_links([], []) == []
