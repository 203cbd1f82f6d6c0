# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Topology labels: where a node sits in the network, as Node labels that Kueue's Topology
levels and NVIDIA Topograph's consumers read (docs/labels.md, "Topology").

The keys are Topograph's (`network.topology.nvidia.com/leaf`, `/spine`), so that tools written
for it work unchanged. Two sources, never mixed for one node:
- what the fabric read saw (switch/topology.py): the leaves the node's NICs were seen on, and
  the spines those leaves see; a node cabled to several leaves (rail-optimised) gets the set;
- for a node without a cabling plan, the inventory: `gpurack_rack` is its leaf level and
  `gpurack_block` its spine level.
A node with a cabling plan whose fabric was not read in this run keeps the labels it has (None:
"leave as is"), so a run without the switches does not move it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from ansible_collections.gpurack.bootstrap.plugins.module_utils.names import LABEL_VALUE_MAX, is_label_value

TOPOLOGY_PREFIX = "network.topology.nvidia.com/"
LEAF_KEY = f"{TOPOLOGY_PREFIX}leaf"
SPINE_KEY = f"{TOPOLOGY_PREFIX}spine"
HOSTNAME_KEY = "kubernetes.io/hostname"
# Kueue's Topology levels, coarsest first, ending at the node itself.
TOPOLOGY_LEVELS = (SPINE_KEY, LEAF_KEY, HOSTNAME_KEY)
_JOIN = "_"  # between the names of a set of switches: label values allow [-_.A-Za-z0-9]


class TopologyError(ValueError):
    """A rack, block or switch name cannot be a topology level; the message says which."""


def level_value(names: Sequence[str]) -> str:
    """One level's label value: the switch's name, or for several the sorted names joined by
    `_`; a name or set that is no label value (too long, other characters) by a stable digest
    (`set-` and 16 hex digits of its SHA-256), so that equal sets stay equal.

    Raises:
        TopologyError: no names.
    """
    if not names:
        raise TopologyError("a topology level needs at least one switch name")
    joined = _JOIN.join(sorted(set(names)))
    if is_label_value(joined) and len(joined) <= LABEL_VALUE_MAX:
        return joined
    return "set-" + hashlib.sha256(joined.encode()).hexdigest()[:16]


def _inventory_level(name: str, value: object) -> str:
    if not isinstance(value, str) or not value or not is_label_value(value):
        raise TopologyError(
            f"{name} must be a label value (up to 63 letters, digits, '-', '_' or '.', starting and"
            f" ending with a letter or digit), got {value!r}"
        )
    return value


def topology_labels(
    seen: Mapping[str, Sequence[str]] | None, rack: object = None, block: object = None, cabled: bool = False
) -> dict[str, str | None]:
    """The node's topology labels: a value to set, None to leave the label as it is; a key
    absent from the result is removed if gpurack set it before.

    `seen`: the fabric read's placement ({"leaf": [...], "spine": [...]}), None when this run did
    not see the node; `cabled`: the node has a cabling plan and the site has switches to read.

    Raises:
        TopologyError: rack or block is not a label value.
    """
    leaves = list((seen or {}).get("leaf") or [])
    if leaves:
        spines = list((seen or {}).get("spine") or [])
        return {LEAF_KEY: level_value(leaves), **({SPINE_KEY: level_value(spines)} if spines else {})}
    if cabled:
        return {LEAF_KEY: None, SPINE_KEY: None}
    labels: dict[str, str | None] = {}
    if rack is not None:
        labels[LEAF_KEY] = _inventory_level("gpurack_rack", rack)
    if block is not None:
        labels[SPINE_KEY] = _inventory_level("gpurack_block", block)
    return labels


def known_levels(
    cabled: bool, rack: object = None, block: object = None, spines: bool = False
) -> tuple[str, ...]:
    """The topology label keys a node will carry, coarsest first (the rule of `topology_labels`,
    read from the inventory before any fabric read): a cabled node its leaf, and its spine when the
    site names its spines; any other its leaf with a rack and its spine with a block. Kueue leaves
    out of a topology-aware flavor every node missing one of the flavor's levels, so a pool's
    Topology may only name the levels all of its nodes carry."""
    if cabled:
        return (SPINE_KEY, LEAF_KEY) if spines else (LEAF_KEY,)
    return tuple(key for key, value in ((SPINE_KEY, block), (LEAF_KEY, rack)) if value is not None)
