# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Where a server sits in the fabric, from what LLDP showed (never from the plan alone): the
leaves its planned NICs were seen on, and the spines those leaves see on their uplinks.

A NIC seen on another leaf than planned moves the server there; the cabling check names the
mismatch in the same run (checks.py). The read places a server only where that check could judge
every planned NIC: with one planned on a switch not read in this run, or seen where it fits
another planned NIC too (ambiguous), the server has no placement, so its labels stay. Spines are
the LLDP neighbours of a leaf whose system name is one of the site's spines
(`gpurack_fabric_spines`): a leaf's other neighbours are servers, management hosts or other
leaves.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import Neighbor, SwitchView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.plan import Link


def sightings(link: Link, views: Mapping[str, SwitchView]) -> list[tuple[str, Neighbor]]:
    """Every switch port whose LLDP neighbour is `link`'s server NIC (Link.sent_by)."""
    return [
        (view.name, neighbor)
        for view in views.values()
        for neighbor in view.neighbors
        if link.sent_by(neighbor.system, neighbor.remote_port)
    ]


def also_fits(link: Link, links: Sequence[Link], neighbor: Neighbor) -> list[Link]:
    """The other planned links an LLDP neighbour of `link` fits too: the sighting is ambiguous."""
    return [k for k in links if k is not link and k.sent_by(neighbor.system, neighbor.remote_port)]


@dataclass(frozen=True)
class Placement:
    """The leaves a server's NICs were seen on and the spines above them, each sorted."""

    leaves: tuple[str, ...]
    spines: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"leaf": list(self.leaves), "spine": list(self.spines)}


def _named(system: str, names: Collection[str]) -> str | None:
    """The spine of `names` that an LLDP system name is: the name itself or with a domain."""
    seen = system.strip().lower().rstrip(".")
    return next((n for n in names if seen == n.lower() or seen.startswith(f"{n.lower()}.")), None)


def placement(
    server: str, links: Sequence[Link], views: Mapping[str, SwitchView], spines: Collection[str] = ()
) -> Placement | None:
    """Where `server` was seen, or None: none of its planned NICs was seen on a switch read, one is
    planned on a switch not read (its cabling unchecked, a NIC seen elsewhere would move the server
    unnamed), or one was seen where it fits another planned NIC too (ambiguous, not miscabled)."""
    mine = [link for link in links if link.server == server]
    if any(link.switch not in views for link in mine):
        return None
    seen = [(link, switch, n) for link in mine for switch, n in sightings(link, views)]
    if any(also_fits(link, links, n) for link, _switch, n in seen):
        return None
    leaves = sorted({switch for _link, switch, _n in seen})
    if not leaves:
        return None
    above = {_named(n.system, spines) for leaf in leaves for n in views[leaf].neighbors}
    return Placement(tuple(leaves), tuple(sorted(s for s in above if s)))
