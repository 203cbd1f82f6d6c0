"""Topology from the fabric read (switch/topology.py) and its labels (labels/topology.py): where
LLDP saw a server's NICs, never the plan alone, and away from the plan only where the cabling check
names the NIC; the inventory's rack and block where no switch is read; a cabled node not seen in
this run keeps what it has."""

from __future__ import annotations

import itertools

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels import (
    LEAF_KEY,
    SPINE_KEY,
    TOPOLOGY_LEVELS,
    TopologyError,
    known_levels,
    level_value,
    topology_labels,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import Verdict
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch import (
    Placement,
    SwitchView,
    check_fabric,
    placement,
    plan_from_vars,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import Neighbor
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.plan import FabricExpect

SPINES = ("spine1", "spine2")


def _cabling(*links: tuple[str, str, str]) -> dict[str, dict[str, str]]:
    return {nic: {"switch": switch, "port": port} for nic, switch, port in links}


PLAN = plan_from_vars(
    {
        "gpu01": {
            "gpurack_cabling": _cabling(("mlx5_0", "leaf1", "Ethernet1"), ("mlx5_1", "leaf1", "Ethernet2"))
        },
        "gpu02": {
            "gpurack_cabling": _cabling(("mlx5_0", "leaf1", "Ethernet3"), ("mlx5_1", "leaf2", "Ethernet3"))
        },
        "gpu03": {"gpurack_cabling": _cabling(("mlx5_0", "leaf2", "Ethernet4"))},
    }
)


def _leaf(name: str, *neighbors: tuple[str, str, str]) -> SwitchView:
    return SwitchView(name, "arista_eos", neighbors=tuple(Neighbor(*n) for n in neighbors))


def _views(gpu03_on: str = "leaf2") -> dict[str, SwitchView]:
    """leaf1 and leaf2 as LLDP shows them: the servers' NICs (gpu01.dc.example sends its FQDN),
    uplinks to two spines (one by FQDN) and a management host that is no spine."""
    leaf1 = [
        ("Ethernet1", "gpu01.dc.example", "mlx5_0"),
        ("Ethernet2", "gpu01.dc.example", "mlx5_1"),
        ("Ethernet3", "gpu02", "mlx5_0"),
        ("Ethernet49", "spine1.dc.example", "Ethernet1/1"),
        ("Ethernet50", "spine2", "Ethernet1/1"),
        ("Ethernet48", "mgmt1", "eth0"),
    ]
    leaf2 = [("Ethernet3", "gpu02", "mlx5_1"), ("Ethernet49", "spine2", "Ethernet1/2")]
    gpu03 = ("Ethernet4", "gpu03", "mlx5_0")
    (leaf1 if gpu03_on == "leaf1" else leaf2).append(gpu03)
    return {"leaf1": _leaf("leaf1", *leaf1), "leaf2": _leaf("leaf2", *leaf2)}


def test_a_server_sits_under_the_leaf_its_nics_were_seen_on_and_the_spines_that_leaf_sees() -> None:
    assert placement("gpu01", PLAN.links, _views(), SPINES) == Placement(("leaf1",), ("spine1", "spine2"))
    assert placement("gpu03", PLAN.links, _views(), SPINES) == Placement(("leaf2",), ("spine2",))
    assert placement("gpu01", PLAN.links, _views()) == Placement(("leaf1",))  # no spines named: none
    # Rail-optimised: one NIC on each leaf; the level is the set, and the same set is the same value.
    rails = placement("gpu02", PLAN.links, _views(), SPINES)
    assert rails == Placement(("leaf1", "leaf2"), ("spine1", "spine2"))
    assert topology_labels(rails.to_dict() if rails else None) == {
        LEAF_KEY: "leaf1_leaf2",
        SPINE_KEY: "spine1_spine2",
    }


def test_a_nic_seen_on_another_leaf_moves_the_server_and_the_cabling_check_names_it() -> None:
    views = _views(gpu03_on="leaf1")
    assert placement("gpu03", PLAN.links, views, SPINES) == Placement(("leaf1",), ("spine1", "spine2"))
    results = check_fabric(PLAN.links, views, lambda _s: FabricExpect())["gpu03"]
    assert [r.reason for r in results if r.id == "switch.cabling"] == [
        "gpu03 mlx5_0 should be on leaf2 Ethernet4; LLDP shows it on leaf1 Ethernet4"
    ]


def test_a_server_no_switch_saw_has_no_placement() -> None:
    assert placement("gpu03", PLAN.links, {"leaf1": _views()["leaf1"]}, SPINES) is None
    assert placement("cpu01", PLAN.links, _views(), SPINES) is None


# gpu02's NICs (mlx5_0 planned on leaf1 Ethernet3, mlx5_1 on leaf2 Ethernet3): on their planned
# port, cabled into the other leaf's Ethernet60, or seen nowhere.
WHERE = ("planned", "other", "gone")


def _gpu02_views(nics: dict[str, str], read: tuple[str, ...]) -> dict[str, SwitchView]:
    """The switches of `read` as LLDP shows gpu02's NICs placed as `nics` says."""
    planned = {"mlx5_0": ("leaf1", "Ethernet3"), "mlx5_1": ("leaf2", "Ethernet3")}
    seen: dict[str, list[tuple[str, str, str]]] = {"leaf1": [], "leaf2": []}
    for nic, where in nics.items():
        leaf, port = planned[nic]
        if where == "other":
            leaf, port = ("leaf2" if leaf == "leaf1" else "leaf1"), "Ethernet60"
        if where != "gone":
            seen[leaf].append((port, "gpu02", nic))
    return {name: _leaf(name, *seen[name]) for name in read}


@pytest.mark.parametrize(
    ("first", "second", "read"),
    list(itertools.product(WHERE, WHERE, [("leaf1", "leaf2"), ("leaf1",), ("leaf2",), ()])),
)
def test_the_placement_leaves_the_plan_only_where_the_cabling_check_names_the_nic(
    first: str, second: str, read: tuple[str, ...]
) -> None:
    """Every cabling of gpu02's two NICs, with both switches read, one, or none: a placement away
    from the planned leaves comes only with a failed switch.cabling naming each NIC off its port."""
    views = _gpu02_views({"mlx5_0": first, "mlx5_1": second}, read)
    unread = {name: "it was not read in this run" for name in ("leaf1", "leaf2") if name not in read}
    results = check_fabric(PLAN.links, views, lambda _s: FabricExpect(), unread)["gpu02"]
    named = {r.component for r in results if r.id == "switch.cabling" and r.verdict is Verdict.FAIL}
    seen = placement("gpu02", PLAN.links, views)
    whole_read = set(read) == {"leaf1", "leaf2"}
    # Both switches read and a NIC seen: the server is placed (None would keep its labels forever).
    assert (seen is not None) == (whole_read and (first, second) != ("gone", "gone")), seen
    if seen is None:
        return  # no placement: the labels stay as they are (topology_labels(None, cabled=True))
    off = {nic for nic, where in (("mlx5_0", first), ("mlx5_1", second)) if where != "planned"}
    assert off <= named, (seen, results)
    if not off:
        assert seen.leaves == ("leaf1", "leaf2")


def test_a_miscabled_nic_whose_planned_switch_was_not_read_moves_nothing() -> None:
    """mlx5_1 cabled into leaf1 while leaf2, its planned switch, is not read: the check cannot name
    it (its results are skipped), so the read does not place gpu02 on leaf1 alone."""
    views = _gpu02_views({"mlx5_0": "planned", "mlx5_1": "other"}, ("leaf1",))
    results = check_fabric(PLAN.links, views, lambda _s: FabricExpect(), {"leaf2": "timeout"})["gpu02"]
    assert {r.verdict for r in results if r.component == "mlx5_1"} == {Verdict.SKIP}
    assert placement("gpu02", PLAN.links, views) is None
    assert topology_labels(None, cabled=True) == {LEAF_KEY: None, SPINE_KEY: None}  # kept
    # Read, leaf2 shows the port empty: the check names mlx5_1, and the read places gpu02 on leaf1.
    views = _gpu02_views({"mlx5_0": "planned", "mlx5_1": "other"}, ("leaf1", "leaf2"))
    results = check_fabric(PLAN.links, views, lambda _s: FabricExpect())["gpu02"]
    assert [r.reason for r in results if r.id == "switch.cabling" and r.verdict is Verdict.FAIL] == [
        "gpu02 mlx5_1 should be on leaf2 Ethernet3; LLDP shows it on leaf1 Ethernet60"
    ]
    assert placement("gpu02", PLAN.links, views) == Placement(("leaf1",))


def test_an_ambiguous_sighting_places_neither_server() -> None:
    """A neighbour that fits two planned NICs is neither cabled nor miscabled (a warning): it
    places neither server, so neither's labels move on it."""
    plan = plan_from_vars(
        {
            "gpu01": {"gpurack_cabling": _cabling(("mlx5_0", "leaf1", "Ethernet1"))},
            "gpu01-spare": {"gpurack_cabling": _cabling(("mlx5_0", "leaf2", "Ethernet1")),
                            "gpurack_lldp_system_name": "gpu01"},
        },
        ["leaf1", "leaf2"],
    )  # fmt: skip
    views = {"leaf1": _leaf("leaf1", ("Ethernet1", "gpu01.dc.example", "mlx5_0")), "leaf2": _leaf("leaf2")}
    cabling = check_fabric(plan.links, views, lambda _s: FabricExpect())
    assert [r.verdict for r in cabling["gpu01"] if r.id == "switch.cabling"] == [Verdict.WARN]
    assert placement("gpu01", plan.links, views) is None
    assert placement("gpu01-spare", plan.links, views) is None


def test_labels_come_from_the_fabric_or_else_from_the_inventory_never_both() -> None:
    seen = {"leaf": ["leaf1"], "spine": []}
    assert topology_labels(seen, rack="r1", block="b1", cabled=True) == {LEAF_KEY: "leaf1"}
    # Cabled but not seen in this run: leave both as they are, whatever the inventory says.
    assert topology_labels(None, rack="r1", block="b1", cabled=True) == {LEAF_KEY: None, SPINE_KEY: None}
    assert topology_labels(None, rack="r1", block="b1") == {LEAF_KEY: "r1", SPINE_KEY: "b1"}
    assert topology_labels(None, rack="r1") == {LEAF_KEY: "r1"}
    assert topology_labels(None) == {}  # nothing known: gpurack's topology labels go
    assert TOPOLOGY_LEVELS == (SPINE_KEY, LEAF_KEY, "kubernetes.io/hostname")  # coarsest first


@pytest.mark.parametrize("rack", ["", "rack 1", "-r1", 7, "r" * 64])
def test_a_rack_that_is_no_label_value_is_refused_by_name(rack: object) -> None:
    with pytest.raises(TopologyError, match="gpurack_rack must be a label value"):
        topology_labels(None, rack=rack)


def test_a_level_value_is_a_label_value_whatever_the_switch_names() -> None:
    assert level_value(["leaf2", "leaf1", "leaf1"]) == "leaf1_leaf2"
    long = [f"leaf-{i:03d}.pod7.dc.example" for i in range(8)]
    digest = level_value(long)
    assert digest.startswith("set-") and len(digest) == 20 and digest == level_value(list(reversed(long)))
    assert level_value(["leaf/1"]).startswith("set-")
    with pytest.raises(TopologyError):
        level_value([])


def test_the_levels_a_node_will_carry_follow_the_same_rule_as_its_labels() -> None:
    """What the Kueue Topology may name, read before any fabric run, agrees with topology_labels."""
    for cabled, rack, block, spines in [
        (True, "r1", "b1", False),
        (True, None, None, True),
        (False, "r1", "b1", False),
        (False, "r1", None, True),
        (False, None, "b1", False),
        (False, None, None, False),
    ]:
        seen = {"leaf": ["leaf1"], "spine": ["spine1"] if spines else []} if cabled else None
        labels = topology_labels(seen, rack, block, cabled)
        assert known_levels(cabled, rack, block, spines) == tuple(
            k for k in (SPINE_KEY, LEAF_KEY) if k in labels
        )
