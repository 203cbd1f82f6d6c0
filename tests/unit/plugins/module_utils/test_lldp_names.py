"""LLDP neighbours matched to planned NICs by what servers really send: lldpd's FQDN system name
and MAC port ID, a declared name, and an ambiguous match reported as such."""

from __future__ import annotations

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import Verdict
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.checks import check_fabric
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.fabric import plan_from_vars
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.host_lldp import parse_neighbors
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import (
    Neighbor,
    SwitchOutputError,
    SwitchView,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.plan import (
    FabricExpect,
    Link,
    PlanError,
    normal_mac,
)
from hypothesis import given
from hypothesis import strategies as st

MAC = "9c:63:c0:2f:11:a0"


@pytest.mark.parametrize("text", [MAC, MAC.upper(), "9c-63-c0-2f-11-a0", "9c63.c02f.11a0", "9C63C02F11A0"])
def test_every_usual_mac_notation_is_one_mac(text: str) -> None:
    assert normal_mac(text) == MAC


@pytest.mark.parametrize(
    "text", ["", "9c:63:c0:2f:11", "9c:63:c0:2f:11:a0:00", "zz:63:c0:2f:11:a0", "Ethernet1", None, 5]
)
def test_what_is_no_mac_is_none(text: object) -> None:
    assert normal_mac(text) is None


LINK = Link(
    "gpu01", "mlx5_0", "leaf1", "Ethernet1", "ens1f0np0", system_names=("node-17.dc.example",), macs=(MAC,)
)


@pytest.mark.parametrize(
    ("system", "port_id", "sent"),
    [
        ("gpu01", "ens1f0np0", True),
        ("gpu01.rack1.example", "ens1f0np0", True),  # lldpd's default: the FQDN
        ("GPU01.Rack1.Example.", "ens1f0np0", True),  # host names have no case; a root dot
        ("gpu01.rack1.example", "9C-63-C0-2F-11-A0", True),  # lldpd's default port ID: the MAC
        ("node-17.dc.example", MAC, True),  # the name the plan declares
        ("gpu011.rack1.example", "ens1f0np0", False),  # another host sharing the prefix
        ("gpu01", "ens1f1np1", False),
        ("gpu01", "9c:63:c0:2f:11:a1", False),
        ("leaf2", "ens1f0np0", False),
    ],
)
def test_a_neighbour_is_the_planned_nic_by_what_gpurack_knows(system: str, port_id: str, sent: bool) -> None:
    assert LINK.sent_by(system, port_id) is sent


def test_two_planned_nics_that_fit_one_neighbour_are_ambiguous_not_pass_or_miscabled() -> None:
    cabling = {"mlx5_0": {"switch": "leaf1", "port": "Et1"}}
    plan = plan_from_vars(
        {
            "gpu01": {"gpurack_cabling": cabling},
            "gpu01-spare": {"gpurack_cabling": {"mlx5_0": {"switch": "leaf1", "port": "Et2"}},
                            "gpurack_lldp_system_name": "gpu01"},
        },
        ["leaf1"],
    )  # fmt: skip
    view = SwitchView("leaf1", "eos", neighbors=(Neighbor("Ethernet1", "gpu01.rack1.example", "mlx5_0"),))
    results = check_fabric(plan.links, {"leaf1": view}, lambda _: FabricExpect())
    first = next(r for r in results["gpu01"] if r.id == "switch.cabling")
    assert first.verdict is Verdict.WARN
    assert first.reason is not None and first.reason.startswith(
        "ambiguous: LLDP shows gpu01.rack1.example mlx5_0 on leaf1 Ethernet1,"
        " which fits gpu01 mlx5_0, gpu01-spare mlx5_0"
    )


def test_the_nic_facts_give_the_macs_and_a_bad_declared_name_is_refused() -> None:
    facts = {
        "net": [{"name": "mlx5_0", "address": MAC.upper()}, {"name": "eth0", "address": "00:11:22:33:44:55"}]
    }
    plan = plan_from_vars(
        {"gpu01": {"gpurack_cabling": {"mlx5_0": {"switch": "leaf1", "port": "Et1"}}, "gpurack_nic": facts}}
    )
    assert plan.links[0].macs == (MAC,)
    with pytest.raises(PlanError, match="gpurack_lldp_system_name must be a host name"):
        plan_from_vars(
            {"gpu01": {"gpurack_cabling": {"x": {"switch": "l", "port": "p"}}, "gpurack_lldp_system_name": 5}}
        )
    with pytest.raises(PlanError, match=r"gpurack_cabling.x.mac must be a MAC address"):
        plan_from_vars({"gpu01": {"gpurack_cabling": {"x": {"switch": "l", "port": "p", "mac": "nope"}}}})


@given(st.text(max_size=40))
def test_normal_mac_is_a_mac_or_none(text: str) -> None:
    mac = normal_mac(text)
    assert mac is None or (len(mac) == 17 and normal_mac(mac) == mac)


_LEAF = st.none() | st.booleans() | st.text(max_size=8) | st.integers()


@given(
    st.recursive(
        _LEAF,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
        max_leaves=12,
    )
)
def test_lldpcli_output_of_any_shape_parses_or_is_refused(doc: object) -> None:
    import json

    try:
        parse_neighbors(json.dumps({"lldp": [{"interface": doc}]}))
        parse_neighbors(json.dumps(doc))
    except SwitchOutputError:
        pass
