"""Switch fabric filters: the intended port settings from the cabling plan, and one server's
switch-side results from what the switches showed (or why one could not be read)."""

from __future__ import annotations

from typing import Any

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.filter.fabric import (
    FilterModule,
    fabric_placement,
    fabric_results,
    switch_port_intents,
)
from switch_outputs import OUTPUTS, view

FABRIC = {"mtu": 9214, "pfc_priority": 3, "ecn": True}
HOSTVARS: dict[str, dict[str, Any]] = {
    "gpu01": {
        "gpurack_cabling": {
            "mlx5_0": {"switch": "leaf1", "port": "Et1"},
            "mlx5_1": {"switch": "leaf1", "port": "Ethernet2"},
        },
        "gpurack_fabric": FABRIC,
        "gpurack_expect": {"rdma": {"rate_gbps": 400}},
    },
    "gpu02": {
        "gpurack_cabling": {"mlx5_0": {"switch": "leaf2", "port": "Ethernet1/1"}},
        "gpurack_fabric": FABRIC,
    },
    "cpu01": {},
    "leaf1": {"switch_fabric_view": view("arista_eos", "leaf1").to_dict(), "switch_fabric_error": ""},
    "leaf2": {
        "switch_fabric_view": {},
        "switch_fabric_error": "leaf2 (10.0.0.2:22): unreachable: no route to host",
    },
}
SERVERS = ["gpu01", "gpu02", "cpu01"]


def test_intents_are_the_switchs_cabled_ports_in_order_with_their_pools_settings() -> None:
    assert switch_port_intents(HOSTVARS, SERVERS, "leaf1") == [
        {
            "port": "Ethernet1",
            "description": "gpu01 mlx5_0",
            "mtu": 9214,
            "speed_gbps": 400,
            "pfc_priority": 3,
            "ecn": True,
        },
        {
            "port": "Ethernet2",
            "description": "gpu01 mlx5_1",
            "mtu": 9214,
            "speed_gbps": 400,
            "pfc_priority": 3,
            "ecn": True,
        },
    ]
    assert switch_port_intents(HOSTVARS, SERVERS, "leaf2")[0]["speed_gbps"] is None  # gpu02 expects no rate
    assert switch_port_intents(HOSTVARS, SERVERS, "spine1") == []


def test_results_of_a_server_name_its_nics_and_skip_an_unread_switch_with_its_reason() -> None:
    gpu01 = fabric_results(HOSTVARS, SERVERS, ["leaf1", "leaf2"], "gpu01")
    verdicts = {(r["id"], r["component"]): r["verdict"] for r in gpu01}
    assert verdicts[("switch.cabling", "mlx5_0")] == "pass"
    assert verdicts[("switch.port.state", "mlx5_1")] == "fail"  # Ethernet2 is shut down
    gpu02 = fabric_results(HOSTVARS, SERVERS, ["leaf1", "leaf2"], "gpu02")
    assert {r["verdict"] for r in gpu02} == {"skip"}
    assert gpu02[0]["reason"] == "leaf2 could not be read: leaf2 (10.0.0.2:22): unreachable: no route to host"
    assert fabric_results(HOSTVARS, SERVERS, ["leaf1", "leaf2"], "cpu01") == []


def test_a_malformed_plan_fails_with_the_host_and_key() -> None:
    broken = {**HOSTVARS, "gpu02": {"gpurack_cabling": {"mlx5_0": {"switch": "leaf2"}}}}
    with pytest.raises(
        AnsibleFilterError, match=r"gpu02: gpurack_cabling.mlx5_0.port must be a non-empty string"
    ):
        switch_port_intents(broken, SERVERS, "leaf2")


def test_the_filters_are_registered() -> None:
    assert set(FilterModule().filters()) == {"switch_port_intents", "fabric_results", "fabric_placement"}


def test_the_servers_own_lldp_adds_host_side_results() -> None:
    hostvars = {**HOSTVARS}
    hostvars["gpu01"] = {
        **HOSTVARS["gpu01"],
        "gpurack_cabling": {
            "mlx5_0": {"switch": "leaf1", "port": "Et1", "lldp_port_id": "ens1f0np0"},
            "mlx5_1": {"switch": "leaf1", "port": "Ethernet2", "lldp_port_id": "ens1f1np1"},
        },
    }
    text = (OUTPUTS / "host" / "lldpcli_json0.json").read_text()
    host = [
        r
        for r in fabric_results(hostvars, SERVERS, ["leaf1", "leaf2"], "gpu01", text)
        if r["id"] == "switch.cabling.host"
    ]
    assert [(r["component"], r["verdict"]) for r in host] == [("mlx5_0", "pass"), ("mlx5_1", "fail")]
    with pytest.raises(
        AnsibleFilterError, match="gpu01: lldpcli -f json0 show neighbors: not lldpcli's json0"
    ):
        fabric_results(hostvars, SERVERS, ["leaf1", "leaf2"], "gpu01", "garbage")


def test_the_placement_is_where_a_read_switch_saw_the_server() -> None:
    switches = ["leaf1", "leaf2"]
    assert fabric_placement(HOSTVARS, SERVERS, switches, "gpu01") == {"leaf": ["leaf1"], "spine": []}
    assert fabric_placement(HOSTVARS, SERVERS, switches, "gpu02") is None  # leaf2 was not read
    with pytest.raises(AnsibleFilterError, match="gpurack_fabric_spines must be a list of switch names"):
        fabric_placement(HOSTVARS, SERVERS, switches, "gpu01", "spine1")  # type: ignore[arg-type]
