"""Pool homogeneity: a node that differs from most of its pool, whatever the expectations pin.

Pure functions over the latest recorded snapshot of each node (`Store.latest_snapshots()`):
for each pool (the pool recorded with the node) and each attribute below, the value most of
the pool's nodes share is the pool's; a node with another value is an outlier. NVSentinel
flags a card with fewer active ports than its peers the same way, and a pool's expectations
often do not count ports or pin a driver.

"Most" is a strict majority of the nodes whose value is known. Without one (two nodes that
differ, or a three-way split) no node is blamed: the split is reported instead, naming who
has which value. A node whose value is unknown (no facts for it) is left out of that
attribute; a pool of one node has nothing to compare.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import PciFactsView

from gpurack.hoststate import NicState
from gpurack.records import SnapshotView

ACTIVE = "ACTIVE"


@dataclass(frozen=True, slots=True)
class Outlier:
    """A node whose `attribute` differs from the value most of its pool has."""

    pool: str
    host: str
    attribute: str
    value: str
    majority: str
    peers_with_majority: int  # of `peers`, how many have the majority value
    peers: int  # the other nodes of the pool whose value is known
    sentence: str


@dataclass(frozen=True, slots=True)
class Split:
    """An attribute on which the pool has no majority: each value with the hosts that have it."""

    pool: str
    attribute: str
    values: tuple[tuple[str, tuple[str, ...]], ...]
    sentence: str


@dataclass(frozen=True, slots=True)
class PoolHomogeneity:
    pool: str
    hosts: tuple[str, ...]
    outliers: tuple[Outlier, ...]
    splits: tuple[Split, ...]


@dataclass(frozen=True, slots=True)
class Homogeneity:
    pools: tuple[PoolHomogeneity, ...]
    unpooled: tuple[str, ...]  # hosts recorded without a pool: compared with nobody

    @property
    def outliers(self) -> tuple[Outlier, ...]:
        return tuple(o for p in self.pools for o in p.outliers)

    @property
    def splits(self) -> tuple[Split, ...]:
        return tuple(s for p in self.pools for s in p.splits)


# ---------------------------------------------------------------------------------------------
# what is compared: attribute -> (its name in sentences, its value on one snapshot or None)


def _number(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _distinct(values: Sequence[Any], unit: str) -> str | None:
    """The distinct values, highest first (`x16, x8`); `none` for no values, None when any is unknown.

    Distinct values, not counts: a missing GPU or a port down already shows in its count, and
    should not be flagged a second time here.
    """
    if any(v is None for v in values):
        return None
    ordered = sorted(set(values), key=lambda v: -float(v))
    return ", ".join(unit.format(_number(v)) for v in ordered) or "none"


def _by_count(item: tuple[str, int]) -> tuple[int, str]:
    return (-item[1], item[0])


def _known(view: SnapshotView, fact: str) -> bool:
    """Whether the snapshot holds `fact` as gathered (a fact that was not available is unknown)."""
    value = view.facts.get(fact)
    return isinstance(value, Mapping) and value.get("available") is not False


def _active_ports(view: SnapshotView) -> list[NicState]:
    return [n for n in view.state.nics if (n.state or "").upper() == ACTIVE]


def _gpu_count(view: SnapshotView) -> str | None:
    return str(len(view.state.gpus)) if _known(view, "gpurack_gpu") else None


def _port_count(view: SnapshotView) -> str | None:
    return str(len(_active_ports(view))) if _known(view, "gpurack_nic") else None


def _port_rates(view: SnapshotView) -> str | None:
    if not _known(view, "gpurack_nic"):
        return None
    return _distinct([n.rate_gbps for n in _active_ports(view)], "{} Gb/s")


def _gpu_widths(view: SnapshotView) -> str | None:
    if not view.state.gpus:
        return None
    return _distinct([g.pcie_width_current for g in view.state.gpus], "x{}")


def _nic_widths(view: SnapshotView) -> str | None:
    """The current link widths of the RDMA NIC functions in `gpurack_pci`."""
    pci = PciFactsView.of(view.facts)
    if pci is None or not _known(view, "gpurack_pci"):
        return None
    rdma = [d for d in pci.devices() if d.is_rdma()]
    return _distinct([d.field("link.sta_width") for d in rdma], "x{}")


def _driver(view: SnapshotView) -> str | None:
    return view.state.driver


ATTRIBUTES: Mapping[str, tuple[str, Callable[[SnapshotView], str | None]]] = {
    "gpu_count": ("GPUs", _gpu_count),
    "active_rdma_ports": ("active RDMA ports", _port_count),
    "rdma_port_rates": ("active RDMA port rates", _port_rates),
    "gpu_pcie_widths": ("GPU PCIe link widths", _gpu_widths),
    "nic_pcie_widths": ("RDMA NIC PCIe link widths", _nic_widths),
    "driver": ("driver version", _driver),
}


# ---------------------------------------------------------------------------------------------
# comparison


def _compare(pool: str, attribute: str, values: Mapping[str, str]) -> tuple[list[Outlier], list[Split]]:
    """Outliers against a strict majority of the known values, else the split."""
    if len(set(values.values())) <= 1:
        return [], []
    label = ATTRIBUTES[attribute][0]
    counts = Counter(values.values())
    (top, top_count), *_ = sorted(counts.items(), key=_by_count)
    if top_count * 2 <= len(values):
        groups = tuple(
            (value, tuple(sorted(h for h, v in values.items() if v == value)))
            for value, _ in sorted(counts.items(), key=_by_count)
        )
        shown = "; ".join(f"{', '.join(hosts)}: {value}" for value, hosts in groups)
        sentence = f"pool {pool}: no majority for {label} ({shown}), so no node is flagged"
        return [], [Split(pool, attribute, groups, sentence)]
    peers = len(values) - 1
    out = [
        Outlier(
            pool=pool,
            host=host,
            attribute=attribute,
            value=value,
            majority=top,
            peers_with_majority=top_count,
            peers=peers,
            sentence=f"{host}: {label} {value}; {top_count} of its {peers} peers in pool {pool} have {top}",
        )
        for host, value in sorted(values.items())
        if value != top
    ]
    return out, []


def _pool(pool: str, views: Sequence[SnapshotView]) -> PoolHomogeneity:
    outliers: list[Outlier] = []
    splits: list[Split] = []
    for attribute, (_, read) in ATTRIBUTES.items():
        known = {v.host: value for v in views if (value := read(v)) is not None}
        found, split = _compare(pool, attribute, known)
        outliers += found
        splits += split
    outliers.sort(key=lambda o: (o.host, list(ATTRIBUTES).index(o.attribute)))
    return PoolHomogeneity(pool, tuple(sorted(v.host for v in views)), tuple(outliers), tuple(splits))


def homogeneity(views: Sequence[SnapshotView]) -> Homogeneity:
    """Each pool's outliers and splits over the given snapshots (one per node: its latest)."""
    by_pool: dict[str, list[SnapshotView]] = {}
    for view in views:
        if view.pool:
            by_pool.setdefault(view.pool, []).append(view)
    pools = tuple(_pool(name, by_pool[name]) for name in sorted(by_pool))
    return Homogeneity(pools, tuple(sorted(v.host for v in views if not v.pool)))
