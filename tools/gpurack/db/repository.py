"""The inventory's queries: records in, records out; the SQLAlchemy rows stay inside."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session, selectinload

from gpurack.db.damage import check_entity, check_values, readable
from gpurack.db.engine import Database
from gpurack.db.models import (
    AcceptanceRun,
    Gpu,
    Node,
    Run,
    Snapshot,
    SwitchLink,
)
from gpurack.db.pairs import Choose, ChosenRuns, read_chosen
from gpurack.db.states import load_states
from gpurack.db.views import (
    acceptance_view,
    head,
    history_entry,
    node_row,
    run_acceptance,
    run_patches,
    run_results,
    run_row,
    snapshot_ids,
    snapshot_view,
    summary,
)
from gpurack.db.writes import write_acceptance, write_links, write_run, write_run_results
from gpurack.hoststate import HostState
from gpurack.records import (
    AcceptanceRecord,
    AcceptanceView,
    ExportRow,
    HistoryEntry,
    LatestSnapshot,
    LinkRecord,
    NodeSummary,
    PatchRecord,
    RunRecord,
    RunView,
    SnapshotRow,
    SnapshotView,
)


class Repository:
    """Runs, nodes and snapshots in one open inventory database."""

    def __init__(self, database: Database) -> None:
        self.database = database

    @property
    def url(self) -> str:
        """The database URL with its password masked."""
        return self.database.shown_url

    def close(self) -> None:
        self.database.close()

    # -- writing ---------------------------------------------------------------------------

    def write_run(
        self, run: RunRecord, rows: Sequence[SnapshotRow], patches: Sequence[PatchRecord] = ()
    ) -> int:
        """Store one run, its snapshots and its patch outcomes in one transaction; return the run id."""
        return self.database.transact(lambda session: write_run(session, run, rows, patches))

    def write_links(self, run: RunRecord, links: Mapping[str, Sequence[LinkRecord]]) -> int:
        """Store one fabric run and where each host's NICs were seen in one transaction; return its id."""
        return self.database.transact(lambda session: write_links(session, run, links))

    def write_acceptance(self, run: RunRecord, acceptance: AcceptanceRecord) -> int:
        """Store one accept run and its rows in one transaction; return its id."""
        return self.database.transact(lambda session: write_acceptance(session, run, acceptance))

    def write_run_results(self, run: RunRecord, results: Sequence[Mapping[str, Any]]) -> int:
        """Store one run and its results about the cluster in one transaction; return its id."""
        return self.database.transact(lambda session: write_run_results(session, run, results))

    def set_k8s_node_name(self, host: str, name: str) -> None:
        """Set the Kubernetes node name of a known host (UsageError when unknown)."""

        def rename(session: Session) -> None:
            node_row(session, host).k8s_node_name = name

        self.database.transact(rename)

    # -- reading ---------------------------------------------------------------------------

    def acceptance_runs(
        self, since: datetime | None = None, until: datetime | None = None
    ) -> list[AcceptanceView]:
        """The acceptance runs whose GPUs were held in [since, until), oldest first."""
        query = (
            select(AcceptanceRun).options(selectinload(AcceptanceRun.steps)).order_by(AcceptanceRun.started)
        )
        if since is not None:
            query = query.where(AcceptanceRun.finished > since)
        if until is not None:
            query = query.where(AcceptanceRun.started < until)
        with self.database.reading() as session:
            return [acceptance_view(row) for row in session.scalars(query)]

    def first_recorded(self) -> datetime | None:
        """The earliest start of any recorded run or acceptance run; None when nothing is recorded."""
        with self.database.reading() as session:
            starts = [
                session.scalar(select(func.min(Run.started))),
                session.scalar(select(func.min(AcceptanceRun.started))),
            ]
        known = [moment for moment in starts if isinstance(moment, datetime)]
        return min(known, default=None)

    def hosts(self) -> list[str]:
        with self.database.reading() as session:
            return list(session.scalars(select(Node.host).order_by(Node.host)))

    def list_nodes(self) -> list[NodeSummary]:
        """Every node with its latest snapshot's verdict, driver and GPUs, by host name."""
        latest = (
            select(
                Snapshot.node_id.label("node_id"),
                func.max(Snapshot.run_id).label("run_id"),
                func.count().label("runs"),
            )
            .group_by(Snapshot.node_id)
            .subquery()
        )
        query = (
            select(
                Node,
                latest.c.runs,
                Snapshot.id,
                Snapshot.run_id,
                Snapshot.verdict,
                Snapshot.driver,
                func.count(Gpu.id),
                func.min(Gpu.name),
            )
            .outerjoin(latest, latest.c.node_id == Node.id)
            .outerjoin(Snapshot, and_(Snapshot.node_id == Node.id, Snapshot.run_id == latest.c.run_id))
            .outerjoin(Gpu, Gpu.snapshot_id == Snapshot.id)
            .group_by(Node.id, latest.c.runs, Snapshot.id)
            .order_by(Node.host)
        )
        with self.database.reading() as session:
            return readable(session.execute(query), summary)

    def history(self, host: str) -> list[HistoryEntry]:
        """Every snapshot of `host`, oldest first (UsageError for an unknown host).

        Raises:
            DamagedRowsError: a row is damaged; the error holds the entries it could read.
        """
        with self.database.reading() as session:
            node = node_row(session, host)
            query = (
                select(
                    Run,
                    Snapshot.id,
                    Snapshot.source,
                    Snapshot.verdict,
                    Snapshot.kernel,
                    Snapshot.driver,
                    Snapshot.cuda,
                )
                .add_columns(func.count(Gpu.id))
                .join(Snapshot, Snapshot.run_id == Run.id)
                .outerjoin(Gpu, Gpu.snapshot_id == Snapshot.id)
                .where(Snapshot.node_id == node.id)
                .group_by(Run.id, Snapshot.id)
                .order_by(Run.id)
            )
            return readable(session.execute(query), history_entry)

    def snapshot_runs(self, host: str) -> dict[int, int]:
        """Run id -> snapshot id of every snapshot of `host`, oldest run first."""
        with self.database.reading() as session:
            return snapshot_ids(session, node_row(session, host))

    def fabric_runs(self, host: str) -> list[int]:
        """The fabric runs that recorded a NIC of `host`, oldest first (UsageError for an unknown host)."""
        with self.database.reading() as session:
            node = node_row(session, host)
            query = (
                select(SwitchLink.run_id)
                .where(SwitchLink.node_id == node.id)
                .group_by(SwitchLink.run_id)
                .order_by(SwitchLink.run_id)
            )
            return list(session.scalars(query))

    def links(self, host: str, run_ids: Sequence[int]) -> dict[int, list[LinkRecord]]:
        """Where each NIC of `host` was seen in each of `run_ids`, by run id, in recorded order."""
        out: dict[int, list[LinkRecord]] = defaultdict(list)
        with self.database.reading() as session:
            node = node_row(session, host)
            query = (
                select(SwitchLink)
                .where(SwitchLink.node_id == node.id, SwitchLink.run_id.in_(run_ids))
                .order_by(SwitchLink.id)
            )
            for link in session.scalars(query):
                check_entity(link)
                out[link.run_id].append(LinkRecord(link.nic, link.switch, link.port, link.neighbor))
        return {run_id: out[run_id] for run_id in run_ids}

    def chosen_runs(self, choose: Choose) -> list[ChosenRuns]:
        """Every node with a snapshot or a fabric run, by host name, with the runs `choose` picks
        and what they hold, read in one session (gpurack.db.pairs)."""
        with self.database.reading() as session:
            return read_chosen(session, choose)

    def snapshot(self, snapshot_id: int) -> SnapshotView:
        """One snapshot with its node, run and check results."""
        with self.database.reading() as session:
            snap = session.get_one(Snapshot, snapshot_id, options=[selectinload(Snapshot.checks)])
            return snapshot_view(snap.node, snap, load_states(session, [snap.id])[snap.id])

    def latest_snapshots(self, pool: str | None = None) -> list[SnapshotView]:
        """The latest snapshot of every node (of `pool` when given), by host name."""
        latest = (
            select(Snapshot.node_id, func.max(Snapshot.run_id).label("run_id"))
            .group_by(Snapshot.node_id)
            .subquery()
        )
        query = (
            select(Node, Snapshot)
            .join(latest, latest.c.node_id == Node.id)
            .join(Snapshot, and_(Snapshot.node_id == Node.id, Snapshot.run_id == latest.c.run_id))
            .options(selectinload(Snapshot.checks), selectinload(Snapshot.run))
            .order_by(Node.host)
        )
        if pool is not None:
            query = query.where(Node.pool == pool)
        with self.database.reading() as session:
            rows = [(node, snap) for node, snap in session.execute(query)]
            states = load_states(session, [snap.id for _, snap in rows])
            return [snapshot_view(node, snap, states[snap.id]) for node, snap in rows]

    def states(self, snapshot_ids: Sequence[int]) -> dict[int, HostState]:
        """The comparable state of each snapshot, by snapshot id."""
        with self.database.reading() as session:
            return load_states(session, snapshot_ids)

    def run(self, run_id: int | None = None) -> RunView:
        """Run `run_id` (default: the latest but fabric runs) with the snapshot of each host it saw.

        Raises:
            UsageError: no such run, or no run recorded yet.
        """
        with self.database.reading() as session:
            run = run_row(session, run_id)
            query = (
                select(Node, Snapshot)
                .join(Snapshot, Snapshot.node_id == Node.id)
                .where(Snapshot.run_id == run.id)
                .options(selectinload(Snapshot.checks))
                .order_by(Node.host)
            )
            rows = [(node, snap) for node, snap in session.execute(query)]
            states = load_states(session, [snap.id for _, snap in rows])
            return RunView(
                run_id=run.id,
                kind=run.kind,
                source=run.source,
                playbook=run.playbook,
                status=run.status,
                started=run.started,
                finished=run.finished,
                nodes=tuple(snapshot_view(node, snap, states[snap.id]) for node, snap in rows),
                acceptance=run_acceptance(session, run.id) if run.kind == "accept" else None,
                patches=run_patches(session, run.id),
                results=run_results(session, run.id),
            )

    def export_rows(self) -> list[ExportRow]:
        """Every node with its latest snapshot, by host name."""
        latest = (
            select(Snapshot.node_id, func.max(Snapshot.run_id).label("run_id"))
            .group_by(Snapshot.node_id)
            .subquery()
        )
        query = (
            select(
                Node, Snapshot.id, Snapshot.run_id, Run.kind, Run.started, Snapshot.source, Snapshot.verdict
            )
            .outerjoin(latest, latest.c.node_id == Node.id)
            .outerjoin(Snapshot, and_(Snapshot.node_id == Node.id, Snapshot.run_id == latest.c.run_id))
            .outerjoin(Run, Run.id == Snapshot.run_id)
            .order_by(Node.host)
        )
        with self.database.reading() as session:
            found = list(session.execute(query))
            states = load_states(session, [row[1] for row in found if row[1] is not None])
        out: list[ExportRow] = []
        for node, sid, run_id, kind, started, source, verdict in found:
            check_entity(node)
            if sid is not None:
                check_values(Run.__table__, run_id, {"kind": kind, "started": started})
                check_values(Snapshot.__table__, sid, {"source": source, "verdict": verdict})
            snap = None
            if sid is not None:
                snap = LatestSnapshot(run_id, kind, started, source, verdict, states[sid])
            out.append(ExportRow(head(node), snap))
        return out
