"""The switch fabric's checks: the plan of tests/fixtures/switch against what leaf1 and leaf2 show."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import (
    CheckResult,
    Verdict,
    node_verdict,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.checks import check_fabric
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import Neighbor, SwitchView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.plan import (
    FabricExpect,
    Link,
    PlanError,
    read_cabling,
    read_expect,
    read_plan,
)
from switch_outputs import view

PLAN: dict[str, Any] = {
    "gpu01": {
        "mlx5_0": {"switch": "leaf1", "port": "Et1"},
        "mlx5_1": {"switch": "leaf1", "port": "Ethernet2"},
    },
    "gpu02": {"mlx5_0": {"switch": "leaf2", "port": "Ethernet1/1"}},
}
ROCE = FabricExpect(mtu=9214, speed_gbps=400, pfc_priority=3, ecn=True)


def views() -> dict[str, SwitchView]:
    return {"leaf1": view("arista_eos", "leaf1"), "leaf2": view("cisco_nxos", "leaf2")}


def by_id(results: list[CheckResult], nic: str) -> dict[str, CheckResult]:
    return {r.id: r for r in results if r.component == nic}


def test_the_plan_is_read_with_canonical_port_names() -> None:
    links = read_plan(PLAN)
    assert links[0] == Link("gpu01", "mlx5_0", "leaf1", "Ethernet1", "mlx5_0")
    assert [link.server_end() for link in links] == ["gpu01 mlx5_0", "gpu01 mlx5_1", "gpu02 mlx5_0"]


def test_a_cleanly_cabled_eos_port_passes_everything_but_its_error_counters() -> None:
    results = check_fabric(read_plan(PLAN), views(), lambda _: ROCE)
    found = by_id(results["gpu01"], "mlx5_0")
    assert {i: r.verdict for i, r in found.items()} == {
        "switch.cabling": Verdict.PASS,
        "switch.port.state": Verdict.PASS,
        "switch.port.mtu": Verdict.PASS,
        "switch.port.speed": Verdict.PASS,
        "switch.port.errors": Verdict.WARN,
        "switch.port.roce": Verdict.PASS,
    }
    assert found["switch.port.errors"].reason == "leaf1 Ethernet1 (gpu01 mlx5_0): 3 input and 0 output errors"


def test_a_miscabled_nic_names_both_ends() -> None:
    results = check_fabric(read_plan(PLAN), views(), lambda _: ROCE)
    cabling = by_id(results["gpu01"], "mlx5_1")["switch.cabling"]
    assert cabling.verdict is Verdict.FAIL
    assert cabling.reason == "gpu01 mlx5_1 should be on leaf1 Ethernet2; LLDP shows it on leaf2 Ethernet1/3"


def test_a_disabled_port_with_a_low_mtu_fails_both_and_its_roce_settings() -> None:
    found = by_id(check_fabric(read_plan(PLAN), views(), lambda _: ROCE)["gpu01"], "mlx5_1")
    assert found["switch.port.state"].reason == "leaf1 Ethernet2 (gpu01 mlx5_1) is disabled"
    assert (
        found["switch.port.mtu"].reason == "leaf1 Ethernet2 (gpu01 mlx5_1): MTU 1500, below the pool's 9214"
    )
    assert found["switch.port.roce"].reason == "leaf1 Ethernet2 (gpu01 mlx5_1): PFC off, ECN off"
    # A port that is down has no speed to judge.
    assert "switch.port.speed" not in found


def test_an_nxos_port_with_its_policies_attached_passes() -> None:
    results = check_fabric(read_plan(PLAN), views(), lambda _: ROCE)
    assert node_verdict(results["gpu02"]) is Verdict.PASS


def test_a_slow_port_fails_speed() -> None:
    found = by_id(
        check_fabric(read_plan(PLAN), views(), lambda _: FabricExpect(speed_gbps=800))["gpu02"], "mlx5_0"
    )
    assert (
        found["switch.port.speed"].reason
        == "leaf2 Ethernet1/1 (gpu02 mlx5_0): 400.0 Gb/s, below the pool's 800"
    )


def test_a_nic_nowhere_in_lldp_says_what_its_planned_port_shows() -> None:
    plan = {"gpu03": {"eth0": {"switch": "leaf1", "port": "Ethernet49/1"}}}
    cabling = by_id(check_fabric(read_plan(plan), views(), lambda _: FabricExpect())["gpu03"], "eth0")[
        "switch.cabling"
    ]
    assert cabling.reason == (
        "gpu03 eth0 should be on leaf1 Ethernet49/1; LLDP shows it on no switch port, "
        "and leaf1 Ethernet49/1 shows spine1 Ethernet1/1"
    )


def test_a_nic_of_a_planned_server_on_an_unplanned_port_is_an_extra_link() -> None:
    plan = {"gpu02": {"mlx5_0": {"switch": "leaf2", "port": "Ethernet1/1"}}, "gpu01": {}}
    leaf2 = view("cisco_nxos", "leaf2")
    results = check_fabric(read_plan(plan), {"leaf2": leaf2}, lambda _: FabricExpect())
    assert results.get("gpu01") is None  # gpu01 has no planned link, so it is not a planned server
    extra_view = SwitchView(
        "leaf2", "cisco_nxos", leaf2.ports, (*leaf2.neighbors, Neighbor("Ethernet1/9", "gpu02", "eth9"))
    )
    found = check_fabric(read_plan(plan), {"leaf2": extra_view}, lambda _: FabricExpect())["gpu02"]
    extra = by_id(found, "eth9")["switch.cabling"]
    assert extra.verdict is Verdict.FAIL
    assert extra.reason == "LLDP shows gpu02 eth9 on leaf2 Ethernet1/9, which the cabling plan does not have"


def test_an_unreachable_switch_skips_its_links_and_the_others_are_checked() -> None:
    only_leaf2 = {"leaf2": view("cisco_nxos", "leaf2")}
    results = check_fabric(read_plan(PLAN), only_leaf2, lambda _: ROCE, {"leaf1": "timed out after 10 s"})
    skipped = [r for r in results["gpu01"] if r.verdict is Verdict.SKIP]
    assert {r.reason for r in skipped} == {"leaf1 could not be read: timed out after 10 s"}
    assert node_verdict(results["gpu02"]) is Verdict.PASS


def test_the_lldp_port_id_names_a_nic_that_advertises_its_netdev() -> None:
    plan = {"gpu01": {"mlx5_1": {"switch": "leaf2", "port": "Ethernet1/3", "lldp_port_id": "ens2f0np0"}}}
    cabling = by_id(check_fabric(read_plan(plan), views(), lambda _: FabricExpect())["gpu01"], "mlx5_1")
    # leaf2 shows "mlx5_1", not the planned port id: the plan's port does not match, and the
    # port id that LLDP shows is an extra link.
    assert cabling["switch.cabling"].verdict is Verdict.FAIL


@pytest.mark.parametrize(
    ("cabling", "message"),
    [
        ("leaf1", "gpu01: gpurack_cabling must map each NIC to {switch, port}"),
        ({"mlx5_0": "leaf1"}, "gpu01: gpurack_cabling.mlx5_0 must be {switch, port}"),
        ({"mlx5_0": {"switch": "leaf1"}}, "gpu01: gpurack_cabling.mlx5_0.port must be a non-empty string"),
        (
            {"mlx5_0": {"switch": "leaf1", "port": "Et1", "vlan": 3}},
            "gpu01: gpurack_cabling.mlx5_0: unknown key",
        ),
    ],
)
def test_a_malformed_plan_names_the_host_and_key(cabling: object, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        read_cabling("gpu01", cabling)


def test_two_nics_planned_on_one_port_are_refused() -> None:
    plan = {
        "gpu01": {"mlx5_0": {"switch": "leaf1", "port": "Et1"}},
        "gpu02": {"mlx5_0": {"switch": "leaf1", "port": "Ethernet1"}},
    }
    with pytest.raises(PlanError, match="leaf1 Ethernet1 is planned for both gpu01 mlx5_0 and gpu02 mlx5_0"):
        read_plan(plan)


def test_expectations_come_from_gpurack_fabric_and_the_rdma_rate() -> None:
    assert read_expect("gpu01", {"mtu": 9214, "pfc_priority": 3, "ecn": True}, {"rate_gbps": 400}) == ROCE
    assert read_expect("gpu01", None, None) == FabricExpect()


@pytest.mark.parametrize(
    ("fabric", "message"),
    [
        ({"pfc_priority": 9}, "pfc_priority must be 0 to 7"),
        ({"mtu": -1}, "mtu must be a positive integer"),
        ({"ecn": "yes"}, "ecn must be true or false"),
        ({"pfc": 3}, "unknown key"),
        ([1], "must be a mapping"),
    ],
)
def test_bad_fabric_expectations_are_refused(fabric: object, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        read_expect("gpu01", fabric, None)
