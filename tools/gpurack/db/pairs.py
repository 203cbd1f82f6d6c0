"""Read what `inventory diff --all` compares, for every node in one session and a few queries.

Per host, `Store.compare()` opens a session for each of its snapshot runs, fabric runs,
states and links (about 15 round trips). This reads every node's snapshot runs and fabric
runs with one query each, lets the caller choose the runs to compare (`Choose`: the domain's
rule, kept in gpurack.inventory), then reads the chosen snapshots' states (`load_states`, in
chunks of CHUNK ids) and the chosen fabric runs' links.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from gpurack.db.damage import check_entity, check_values
from gpurack.db.models import Node, Snapshot, SwitchLink
from gpurack.db.states import chunks, load_states
from gpurack.hoststate import HostState
from gpurack.records import LinkRecord

# (older run, newer run) to compare; None where there is none.
Pair = tuple[int | None, int | None]
# (snapshot runs, fabric runs) of one host, oldest first -> (snapshot runs, fabric runs) to compare.
Choose = Callable[[list[int], list[int]], tuple[Pair, Pair]]
_LINK_COLUMNS = (
    SwitchLink.id,
    SwitchLink.node_id,
    SwitchLink.run_id,
    SwitchLink.nic,
    SwitchLink.switch,
    SwitchLink.port,
    SwitchLink.neighbor,
)


@dataclass(frozen=True, slots=True)
class ChosenRuns:
    """One host's runs chosen for comparison, with what the runs of each complete pair hold."""

    host: str
    snapshots: Pair
    fabric: Pair
    states: dict[int, HostState]  # by run id: both snapshot runs when neither is None, else empty
    links: dict[int, list[LinkRecord]]  # by run id: both fabric runs when neither is None, else empty


@dataclass(frozen=True, slots=True)
class _Pick:
    node_id: int
    host: str
    snapshots: Pair
    fabric: Pair


def read_chosen(session: Session, choose: Choose) -> list[ChosenRuns]:
    """Every node with a snapshot or a fabric run, by host name, with the runs `choose` picks.

    Raises:
        DamagedRowError: a node, snapshot, child row or link read is damaged.
    """
    snapshot_ids = _snapshot_ids(session)
    fabric_runs = _fabric_runs(session)
    picks: list[_Pick] = []
    for node in session.scalars(select(Node).order_by(Node.host)):
        check_entity(node)
        by_run = snapshot_ids.get(node.id, {})
        fabric = fabric_runs.get(node.id, [])
        if by_run or fabric:
            picks.append(_Pick(node.id, node.host, *choose(list(by_run), fabric)))
    sids = {(p.node_id, run): snapshot_ids[p.node_id][run] for p in picks for run in _complete(p.snapshots)}
    states = load_states(session, list(sids.values()))
    links = _links(session, {(p.node_id, run) for p in picks for run in _complete(p.fabric)})
    return [
        ChosenRuns(
            p.host,
            p.snapshots,
            p.fabric,
            {run: states[sids[p.node_id, run]] for run in _complete(p.snapshots)},
            {run: links.get((p.node_id, run), []) for run in _complete(p.fabric)},
        )
        for p in picks
    ]


def _complete(pair: Pair) -> tuple[int, ...]:
    """Both runs of `pair`, or none when one side is missing (nothing to compare)."""
    before, after = pair
    return () if before is None or after is None else (before, after)


def _snapshot_ids(session: Session) -> dict[int, dict[int, int]]:
    """Node id -> run id -> snapshot id, each node's oldest run first."""
    out: dict[int, dict[int, int]] = defaultdict(dict)
    query = select(Snapshot.node_id, Snapshot.run_id, Snapshot.id).order_by(Snapshot.node_id, Snapshot.run_id)
    for node_id, run_id, sid in session.execute(query):
        out[node_id][run_id] = sid
    return out


def _fabric_runs(session: Session) -> dict[int, list[int]]:
    """Node id -> the fabric runs that recorded a NIC of it, oldest first."""
    out: dict[int, list[int]] = defaultdict(list)
    query = (
        select(SwitchLink.node_id, SwitchLink.run_id)
        .group_by(SwitchLink.node_id, SwitchLink.run_id)
        .order_by(SwitchLink.node_id, SwitchLink.run_id)
    )
    for node_id, run_id in session.execute(query):
        out[node_id].append(run_id)
    return out


def _links(session: Session, wanted: Collection[tuple[int, int]]) -> dict[tuple[int, int], list[LinkRecord]]:
    """(node id, run id) -> where each NIC of that node was seen in that run, in recorded order.

    Reads the links of the wanted runs (few: most hosts share their last two fabric runs) and
    keeps those of the wanted (node, run) pairs.
    """
    out: dict[tuple[int, int], list[LinkRecord]] = defaultdict(list)
    runs = sorted({run for _, run in wanted})
    for chunk in chunks(runs):
        query = select(*_LINK_COLUMNS).where(SwitchLink.run_id.in_(chunk)).order_by(SwitchLink.id)
        for link_id, node_id, run_id, nic, switch, port, neighbor in session.execute(query):
            if (node_id, run_id) in wanted:
                fields = {"nic": nic, "switch": switch, "port": port, "neighbor": neighbor}
                check_values(SwitchLink.__table__, link_id, fields)
                out[node_id, run_id].append(LinkRecord(nic, switch, port, neighbor))
    return out
