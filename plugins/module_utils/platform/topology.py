# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Kueue's Topology Aware Scheduling, where the site turns it on (`gpurack_kueue_topology: true`;
docs/platform.md, "Topology and all-or-nothing admission"): which levels each pool's flavor names.

Two rules of Kueue v0.17 shape it (pkg/util/tas, pkg/scheduler/flavorassigner):
- a topology-aware flavor leaves out every node that misses one of its Topology's levels, so a
  pool's Topology holds only the levels all of its nodes carry (labels/topology.py, `known_levels`);
- a workload that asks for no topology may use a topology-aware flavor only when every flavor of
  its ClusterQueue is one (Kueue then places it as it likes), so when the site turns it on, every
  pool gets a Topology: hostname alone for a pool whose nodes carry no network level.
Off (the default), no flavor names a Topology and every job queues as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.topology import (
    HOSTNAME_KEY,
    LEAF_KEY,
    SPINE_KEY,
    known_levels,
)

_SHORT = {SPINE_KEY: "spine", LEAF_KEY: "leaf", HOSTNAME_KEY: "host"}
# The site variables the levels depend on: whether the site has switches to read
# (groups['tor_switches']) and which of their LLDP neighbours are spines.
FABRIC_VARS = ("gpurack_fabric_switches", "gpurack_fabric_spines", "gpurack_kueue_topology")


def host_levels(values: Mapping[str, Any], site_vars: Mapping[str, Any]) -> tuple[str, ...]:
    """The network levels (coarsest first) a host's Node will carry, from its inventory."""
    cabled = bool(values.get("gpurack_cabling")) and bool(site_vars.get("gpurack_fabric_switches"))
    spines = bool(site_vars.get("gpurack_fabric_spines"))
    return known_levels(cabled, values.get("gpurack_rack"), values.get("gpurack_block"), spines)


def pool_topology(
    levels_per_host: Sequence[tuple[str, ...]], site_vars: Mapping[str, Any]
) -> tuple[str, ...]:
    """The levels of the pool's Topology: those every host carries, coarsest first, then the
    hostname; () while the site has not turned topology-aware admission on."""
    if site_vars.get("gpurack_kueue_topology") is not True:
        return ()
    common = [level for level in (SPINE_KEY, LEAF_KEY) if all(level in h for h in levels_per_host)]
    return (*common, HOSTNAME_KEY)


def topology_name(levels: Sequence[str]) -> str:
    """The Topology's name, from its levels: `gpurack-spine-leaf-host`, `gpurack-leaf-host`."""
    return "gpurack-" + "-".join(_SHORT[level] for level in levels)


def topology_errors(site_vars: Mapping[str, Any]) -> list[str]:
    """The site's topology switches, checked (a misspelt `"true"` must not pass as off)."""
    errors = []
    for name in ("gpurack_kueue_topology", "gpurack_fabric_switches"):
        value = site_vars.get(name)
        if value is not None and not isinstance(value, bool):
            errors.append(f"{name} must be true or false, got {value!r}")
    spines = site_vars.get("gpurack_fabric_spines")
    named = isinstance(spines, list) and all(isinstance(s, str) and s for s in spines)
    if spines is not None and not named:
        errors.append(f"gpurack_fabric_spines must be a list of switch names, got {spines!r}")
    return errors
