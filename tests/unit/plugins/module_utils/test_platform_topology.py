"""Kueue Topology Aware Scheduling, where the site turns it on: a pool's Topology holds only the
levels every node of the pool will carry (Kueue leaves a node missing one out of the flavor),
every pool's flavor names one (so a job asking for no topology still finds every flavor), and
the objects follow Kueue v0.17.0's CRD schema."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.kueue import (
    API_VERSION,
    kueue_objects,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.site import (
    PlatformInputError,
    site_from_dict,
    site_from_hostvars,
)
from platform_inputs import hostvars, kueue_crd_dir, site_vars

LEAF = "network.topology.nvidia.com/leaf"
SPINE = "network.topology.nvidia.com/spine"
HOST = "kubernetes.io/hostname"


def _site(host_extra: dict[str, dict[str, Any]], **overrides: Any) -> Any:
    found = hostvars()
    for host, extra in host_extra.items():
        found[host].update(extra)
    return site_from_hostvars(
        found, sorted(found), site_vars(**{"gpurack_kueue_topology": True, **overrides})
    )


def _kinds(site: Any, kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in kueue_objects(site) if o["kind"] == kind}


RACKED = {
    "h100-a-01": {"gpurack_rack": "r1", "gpurack_block": "b1"},
    "h100-a-02": {"gpurack_rack": "r2", "gpurack_block": "b1"},
    "h200-inf-01": {"gpurack_rack": "r1"},
}


def test_each_pool_gets_the_topology_of_the_levels_all_its_nodes_carry() -> None:
    site = _site(RACKED)
    assert site.pool("h100-train-a").topology == (SPINE, LEAF, HOST)
    assert site.pool("h200-inference").topology == (HOST,)  # h200-inf-02 has no rack
    topologies = _kinds(site, "Topology")
    assert sorted(topologies) == ["gpurack-host", "gpurack-spine-leaf-host"]
    assert topologies["gpurack-spine-leaf-host"] == {
        "apiVersion": API_VERSION,
        "kind": "Topology",
        "metadata": topologies["gpurack-spine-leaf-host"]["metadata"],
        "spec": {"levels": [{"nodeLabel": SPINE}, {"nodeLabel": LEAF}, {"nodeLabel": HOST}]},
    }
    flavors = _kinds(site, "ResourceFlavor")
    assert flavors["h100-train-a"]["spec"]["topologyName"] == "gpurack-spine-leaf-host"
    assert flavors["h200-inference"]["spec"]["topologyName"] == "gpurack-host"
    kinds = [o["kind"] for o in kueue_objects(site)]
    assert kinds.index("Topology") < kinds.index("ResourceFlavor")  # a flavor's topology exists first
    assert site_from_dict(site.to_dict()) == site  # the module gets the same site


def test_only_the_levels_every_node_carries() -> None:
    one_without_block = {**RACKED, "h100-a-02": {"gpurack_rack": "r2"}}
    assert _site(one_without_block).pool("h100-train-a").topology == (LEAF, HOST)
    one_without_rack = {"h100-a-01": {"gpurack_rack": "r1"}}
    assert _site(one_without_rack).pool("h100-train-a").topology == (HOST,)
    assert list(_kinds(_site(one_without_rack), "Topology")) == ["gpurack-host"]


def test_cabled_nodes_take_their_levels_from_the_fabric_read_when_the_site_has_switches() -> None:
    cabled = {h: {"gpurack_cabling": {"mlx5_0": {"switch": "leaf1", "port": "Ethernet1"}}} for h in RACKED}
    assert _site(cabled).pool("h100-train-a").topology == (HOST,)  # no switches to read: no leaf label
    with_switches = _site(cabled, gpurack_fabric_switches=True)
    assert with_switches.pool("h100-train-a").topology == (LEAF, HOST)
    spines = _site(cabled, gpurack_fabric_switches=True, gpurack_fabric_spines=["spine1"])
    assert spines.pool("h100-train-a").topology == (SPINE, LEAF, HOST)


def test_off_by_default_no_flavor_names_a_topology() -> None:
    found = hostvars()
    for host, extra in RACKED.items():
        found[host].update(extra)
    site = site_from_hostvars(found, sorted(found), site_vars())
    assert all(p.topology == () for p in site.pools) and not _kinds(site, "Topology")
    assert "topologyName" not in _kinds(site, "ResourceFlavor")["h100-train-a"]["spec"]


@pytest.mark.parametrize(
    ("name", "value"),
    [("gpurack_kueue_topology", "true"), ("gpurack_fabric_switches", 1), ("gpurack_fabric_spines", "spine1")],
)
def test_a_topology_switch_of_the_wrong_kind_is_refused_by_name(name: str, value: object) -> None:
    with pytest.raises(PlatformInputError, match=name):
        _site(RACKED, **{name: value})


def test_the_topology_follows_the_v0_17_crd_schema() -> None:
    path = kueue_crd_dir() / "kueue.x-k8s.io_topologies.yaml"
    if not path.is_file():
        pytest.skip(f"Kueue v0.17.0 CRDs not downloaded ({path}): run lab/k8s-build to fetch the module")
    crd = yaml.safe_load(path.read_text(encoding="utf-8"))
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == API_VERSION.split("/")[1]]
    for topology in _kinds(_site(RACKED), "Topology").values():
        jsonschema.validate(topology, version["schema"]["openAPIV3Schema"])
        assert topology["spec"]["levels"][-1] == {"nodeLabel": HOST}  # Kueue's rule: hostname last
