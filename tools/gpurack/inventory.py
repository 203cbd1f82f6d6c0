"""Node inventory: record what each run saw on each node, query it, and say what drifted.

The CLI's `run`/`validate` commands call `open_store(url).record(RunRecord(...), nodes)`;
`gpurack inventory` reads it back. Everything crossing this module's boundary is a frozen
dataclass; the SQLAlchemy rows stay inside.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from types import TracebackType
from typing import Any, Literal, TypeVar

from sqlalchemy import and_, func, insert, select
from sqlalchemy.orm import Session, selectinload

from gpurack import drift
from gpurack.drift import DiskState, Drift, GpuState, HostState, NicState
from gpurack.errors import UsageError
from gpurack.store import Base, CheckResult, Database, Disk, Gpu, Nic, Node, Run, Snapshot, connect, utcnow

T = TypeVar("T")
RunKind = Literal["run", "validate", "capture"]
ExportFormat = Literal["json", "csv"]
VERDICT_ORDER = ("fail", "warn", "pass", "skip")
# SQLite allows 32766 bound parameters per statement; stay far below for IN (...) lists.
_CHUNK = 500


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One gpurack invocation that looked at nodes."""

    kind: RunKind
    source: str = "ansible"
    playbook: str | None = None
    status: str = "successful"
    started: datetime | None = None  # default: when recorded
    finished: datetime | None = None


@dataclass(frozen=True, slots=True)
class NodeRecord:
    """What one run saw on one node: facts per docs/facts.md, labels and check results."""

    host: str
    pool: str | None
    source: str  # "ansible" | "local" | "capture:<path>"
    facts: Mapping[str, Any]
    labels: Mapping[str, Any] = field(default_factory=dict)
    results: Sequence[Mapping[str, Any]] = ()
    k8s_node_name: str | None = None


@dataclass(frozen=True, slots=True)
class NodeSummary:
    host: str
    pool: str | None
    k8s_node_name: str | None
    first_seen: datetime
    last_seen: datetime
    runs: int
    last_run: int | None
    verdict: str | None
    driver: str | None
    gpus: int
    gpu_model: str | None


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    run_id: int
    kind: str
    started: datetime
    finished: datetime | None
    status: str
    playbook: str | None
    source: str
    verdict: str | None
    kernel: str | None
    driver: str | None
    cuda: str | None
    gpus: int


@dataclass(frozen=True, slots=True)
class SnapshotView:
    """One stored snapshot of one host, with the run it belongs to."""

    host: str
    pool: str | None
    k8s_node_name: str | None
    run_id: int
    run_kind: str
    started: datetime
    source: str
    verdict: str | None
    facts: Mapping[str, Any]
    labels: Mapping[str, Any]
    results: tuple[Mapping[str, Any], ...]
    state: HostState


@dataclass(frozen=True, slots=True)
class RunView:
    """One stored run with the snapshot of every host it saw, by host name."""

    run_id: int
    kind: str
    source: str
    playbook: str | None
    status: str
    started: datetime
    finished: datetime | None
    nodes: tuple[SnapshotView, ...]


@dataclass(frozen=True, slots=True)
class Comparison:
    """The drift of one host between two runs; `from_run` is None when there is one snapshot."""

    host: str
    from_run: int | None
    to_run: int
    drifts: tuple[Drift, ...]


def overall_verdict(results: Sequence[Mapping[str, Any]]) -> str | None:
    """The worst verdict of `results` (fail > warn > pass > skip), None without results."""
    seen = {str(r.get("verdict")) for r in results}
    return next((v for v in VERDICT_ORDER if v in seen), None)


def _chunks(items: Sequence[T]) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _result_row(snapshot_id: int, result: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "snapshot_id": snapshot_id,
        "check_id": str(result.get("id")),
        "title": _text(result.get("title")),
        "tier": _text(result.get("tier")),
        "component": _text(result.get("component")),
        "verdict": str(result.get("verdict")),
        "measured": result.get("measured"),
        "expected": result.get("expected"),
        "unit": _text(result.get("unit")),
        "reason": _text(result.get("reason")),
        "remediation": _text(result.get("remediation")),
        "evidence": result.get("evidence"),
        "limit_source": _text(result.get("limit_source")),
        "percent": _number(result.get("percent")),
    }


def _result_dict(row: CheckResult) -> dict[str, Any]:
    return {
        "id": row.check_id,
        "title": row.title,
        "tier": row.tier,
        "component": row.component,
        "verdict": row.verdict,
        "measured": row.measured,
        "expected": row.expected,
        "unit": row.unit,
        "reason": row.reason,
        "remediation": row.remediation,
        "evidence": row.evidence,
        "limit_source": row.limit_source,
        "percent": row.percent,
    }


def _load_states(session: Session, snapshot_ids: Sequence[int]) -> dict[int, HostState]:
    """The comparable state of each snapshot, read as plain columns (no ORM objects: diff speed)."""
    heads: dict[int, tuple[str | None, str | None, str | None, dict[str, Any]]] = {}
    gpus: dict[int, list[GpuState]] = defaultdict(list)
    nics: dict[int, list[NicState]] = defaultdict(list)
    disks: dict[int, list[DiskState]] = defaultdict(list)
    checks: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for chunk in _chunks(snapshot_ids):
        for sid, kernel, driver, cuda, labels in session.execute(
            select(Snapshot.id, Snapshot.kernel, Snapshot.driver, Snapshot.cuda, Snapshot.labels).where(
                Snapshot.id.in_(chunk)
            )
        ):
            heads[sid] = (kernel, driver, cuda, labels or {})
        for row in session.execute(
            select(
                Gpu.snapshot_id,
                Gpu.gpu_index,
                Gpu.bus_id,
                Gpu.uuid,
                Gpu.serial,
                Gpu.name,
                Gpu.vbios,
                Gpu.memory_mib,
                Gpu.pcie_gen_current,
                Gpu.pcie_gen_max,
                Gpu.pcie_width_current,
                Gpu.pcie_width_max,
            )
            .where(Gpu.snapshot_id.in_(chunk))
            .order_by(Gpu.id)
        ):
            gpu_values: tuple[Any, ...] = tuple(row)
            gpus[row[0]].append(GpuState(*gpu_values[1:]))
        for nic_row in session.execute(
            select(
                Nic.snapshot_id,
                Nic.device,
                Nic.port,
                Nic.guid,
                Nic.fw,
                Nic.rate_gbps,
                Nic.state,
                Nic.phys_state,
                Nic.link_layer,
            )
            .where(Nic.snapshot_id.in_(chunk))
            .order_by(Nic.id)
        ):
            nics[nic_row[0]].append(NicState(*nic_row[1:]))
        for disk_row in session.execute(
            select(Disk.snapshot_id, Disk.name, Disk.serial, Disk.model, Disk.firmware, Disk.size_bytes)
            .where(Disk.snapshot_id.in_(chunk))
            .order_by(Disk.id)
        ):
            disks[disk_row[0]].append(DiskState(*disk_row[1:]))
        for sid, check_id, component, verdict, reason in session.execute(
            select(
                CheckResult.snapshot_id,
                CheckResult.check_id,
                CheckResult.component,
                CheckResult.verdict,
                CheckResult.reason,
            )
            .where(CheckResult.snapshot_id.in_(chunk))
            .order_by(CheckResult.id)
        ):
            checks[sid].append({"id": check_id, "component": component, "verdict": verdict, "reason": reason})
    return {
        sid: HostState(
            kernel=kernel,
            driver=driver,
            cuda=cuda,
            gpus=tuple(gpus[sid]),
            nics=tuple(nics[sid]),
            disks=tuple(disks[sid]),
            checks=drift.checks_from_results(checks[sid]),
            labels=tuple(sorted((str(k), str(v)) for k, v in labels.items())),
        )
        for sid, (kernel, driver, cuda, labels) in heads.items()
    }


def _snapshot_view(node: Node, snap: Snapshot, state: HostState) -> SnapshotView:
    return SnapshotView(
        host=node.host,
        pool=node.pool,
        k8s_node_name=node.k8s_node_name,
        run_id=snap.run_id,
        run_kind=snap.run.kind,
        started=snap.run.started,
        source=snap.source,
        verdict=snap.verdict,
        facts=snap.facts,
        labels=snap.labels,
        results=tuple(_result_dict(c) for c in snap.checks),
        state=state,
    )


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


class Store:
    """The inventory: runs, nodes and their snapshots. Use `open_store()` to get one."""

    def __init__(self, database: Database) -> None:
        self.database = database

    @property
    def url(self) -> str:
        """The database URL with its password masked."""
        return self.database.shown_url

    def close(self) -> None:
        self.database.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------------

    def record(self, run: RunRecord, nodes: Sequence[NodeRecord]) -> int:
        """Store one run and a snapshot of each node it saw; return the run id.

        Raises:
            UsageError: the same host appears twice in `nodes`.
        """
        hosts = [n.host for n in nodes]
        if len(set(hosts)) != len(hosts):
            twice = sorted({h for h in hosts if hosts.count(h) > 1})
            raise UsageError(f"cannot record run: host listed twice: {', '.join(twice)}")
        started = run.started or utcnow()
        seen = run.finished or started
        with self.database.sessions.begin() as session:
            run_row = Run(
                started=started,
                finished=run.finished,
                kind=run.kind,
                source=run.source,
                playbook=run.playbook,
                status=run.status,
            )
            session.add(run_row)
            node_ids = self._upsert_nodes(session, nodes, seen)
            session.flush()
            if not nodes:
                return run_row.id
            states = [drift.state_from_facts(n.facts, n.results, n.labels) for n in nodes]
            snapshot_ids = list(
                session.scalars(
                    insert(Snapshot).returning(Snapshot.id, sort_by_parameter_order=True),
                    [
                        {
                            "run_id": run_row.id,
                            "node_id": node_ids[n.host],
                            "source": n.source,
                            "facts": dict(n.facts),
                            "labels": dict(n.labels),
                            "kernel": s.kernel,
                            "driver": s.driver,
                            "cuda": s.cuda,
                            "verdict": overall_verdict(n.results),
                        }
                        for n, s in zip(nodes, states, strict=True)
                    ],
                )
            )
            self._insert_children(session, snapshot_ids, nodes, states)
            return run_row.id

    @staticmethod
    def _upsert_nodes(session: Session, nodes: Sequence[NodeRecord], seen: datetime) -> dict[str, int]:
        existing: dict[str, Node] = {}
        hosts = [n.host for n in nodes]
        for chunk in _chunks(hosts):
            existing.update(
                (row.host, row) for row in session.scalars(select(Node).where(Node.host.in_(chunk)))
            )
        for record in nodes:
            row = existing.get(record.host)
            if row is None:
                row = Node(host=record.host, first_seen=seen, last_seen=seen)
                session.add(row)
                existing[record.host] = row
            row.last_seen = max(row.last_seen, seen)
            row.first_seen = min(row.first_seen, seen)
            if record.pool is not None:
                row.pool = record.pool
            if record.k8s_node_name is not None:
                row.k8s_node_name = record.k8s_node_name
        session.flush()
        return {host: row.id for host, row in existing.items()}

    @staticmethod
    def _insert_children(
        session: Session,
        snapshot_ids: Sequence[int],
        nodes: Sequence[NodeRecord],
        states: Sequence[HostState],
    ) -> None:
        gpus: list[dict[str, Any]] = []
        nics: list[dict[str, Any]] = []
        disks: list[dict[str, Any]] = []
        checks: list[dict[str, Any]] = []
        for sid, record, state in zip(snapshot_ids, nodes, states, strict=True):
            gpus.extend(
                {
                    "snapshot_id": sid,
                    "gpu_index": g.index,
                    "bus_id": g.bus_id,
                    "uuid": g.uuid,
                    "serial": g.serial,
                    "name": g.name,
                    "vbios": g.vbios,
                    "memory_mib": g.memory_mib,
                    "pcie_gen_current": g.pcie_gen_current,
                    "pcie_gen_max": g.pcie_gen_max,
                    "pcie_width_current": g.pcie_width_current,
                    "pcie_width_max": g.pcie_width_max,
                }
                for g in state.gpus
            )
            nics.extend({"snapshot_id": sid, **asdict(n)} for n in state.nics)
            disks.extend({"snapshot_id": sid, **asdict(d)} for d in state.disks)
            checks.extend(_result_row(sid, r) for r in record.results if r.get("id") and r.get("verdict"))
        # Core executemany, not ORM bulk inserts: these rows never become objects in this session.
        connection = session.connection()
        models: tuple[tuple[type[Base], list[dict[str, Any]]], ...] = (
            (Gpu, gpus),
            (Nic, nics),
            (Disk, disks),
            (CheckResult, checks),
        )
        for model, rows in models:
            if rows:
                connection.execute(insert(model), rows)

    def set_k8s_node_name(self, host: str, name: str) -> None:
        """Remember the Kubernetes node name of `host` (once it joined a cluster).

        Raises:
            UsageError: `host` is not in the inventory.
        """
        with self.database.sessions.begin() as session:
            self._node(session, host).k8s_node_name = name

    # -- reading ---------------------------------------------------------------------------

    @staticmethod
    def _node(session: Session, host: str) -> Node:
        node = session.scalar(select(Node).where(Node.host == host))
        if node is None:
            raise UsageError(f"unknown host {host!r}: not in the inventory (see gpurack inventory list)")
        return node

    def hosts(self) -> list[str]:
        with self.database.sessions() as session:
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
        with self.database.sessions() as session:
            return [
                NodeSummary(
                    host=node.host,
                    pool=node.pool,
                    k8s_node_name=node.k8s_node_name,
                    first_seen=node.first_seen,
                    last_seen=node.last_seen,
                    runs=runs or 0,
                    last_run=run_id,
                    verdict=verdict,
                    driver=driver,
                    gpus=gpus,
                    gpu_model=model,
                )
                for node, runs, run_id, verdict, driver, gpus, model in session.execute(query)
            ]

    def history(self, host: str) -> list[HistoryEntry]:
        """Every snapshot of `host`, oldest first.

        Raises:
            UsageError: `host` is not in the inventory.
        """
        with self.database.sessions() as session:
            node = self._node(session, host)
            query = (
                select(
                    Run, Snapshot.source, Snapshot.verdict, Snapshot.kernel, Snapshot.driver, Snapshot.cuda
                )
                .add_columns(func.count(Gpu.id))
                .join(Snapshot, Snapshot.run_id == Run.id)
                .outerjoin(Gpu, Gpu.snapshot_id == Snapshot.id)
                .where(Snapshot.node_id == node.id)
                .group_by(Run.id, Snapshot.id)
                .order_by(Run.id)
            )
            return [
                HistoryEntry(
                    run_id=run.id,
                    kind=run.kind,
                    started=run.started,
                    finished=run.finished,
                    status=run.status,
                    playbook=run.playbook,
                    source=source,
                    verdict=verdict,
                    kernel=kernel,
                    driver=driver,
                    cuda=cuda,
                    gpus=gpus,
                )
                for run, source, verdict, kernel, driver, cuda, gpus in session.execute(query)
            ]

    @staticmethod
    def _snapshot_ids(session: Session, node: Node) -> dict[int, int]:
        """Run id -> snapshot id of every snapshot of `node`, oldest run first."""
        query = (
            select(Snapshot.run_id, Snapshot.id).where(Snapshot.node_id == node.id).order_by(Snapshot.run_id)
        )
        return {run_id: sid for run_id, sid in session.execute(query)}

    def snapshot(self, host: str, run_id: int | None = None) -> SnapshotView:
        """The snapshot of `host` in run `run_id` (default: its latest).

        Raises:
            UsageError: unknown host, or the host has no snapshot in that run.
        """
        with self.database.sessions() as session:
            node = self._node(session, host)
            by_run = self._snapshot_ids(session, node)
            runs = list(by_run)
            if not runs:
                raise UsageError(f"host {host!r} has no snapshots")
            wanted = runs[-1] if run_id is None else run_id
            if wanted not in runs:
                raise UsageError(
                    f"host {host!r} has no snapshot in run {wanted} (see gpurack inventory history {host})"
                )
            snap = session.get_one(Snapshot, by_run[wanted], options=[selectinload(Snapshot.checks)])
            return _snapshot_view(node, snap, _load_states(session, [snap.id])[snap.id])

    def run(self, run_id: int | None = None) -> RunView:
        """Run `run_id` (default: the latest) with the snapshot of each host it saw.

        Raises:
            UsageError: no such run, or no run recorded yet.
        """
        with self.database.sessions() as session:
            wanted = run_id if run_id is not None else session.scalar(select(func.max(Run.id)))
            if wanted is None:
                raise UsageError("no runs recorded yet: `gpurack validate` and `gpurack run` record them")
            run = session.get(Run, wanted)
            if run is None:
                latest = session.scalar(select(func.max(Run.id)))
                raise UsageError(f"unknown run {wanted}: not in the inventory (runs 1 to {latest or 0})")
            query = (
                select(Node, Snapshot)
                .join(Snapshot, Snapshot.node_id == Node.id)
                .where(Snapshot.run_id == run.id)
                .options(selectinload(Snapshot.checks))
                .order_by(Node.host)
            )
            rows = [(node, snap) for node, snap in session.execute(query)]
            states = _load_states(session, [snap.id for _, snap in rows])
            return RunView(
                run_id=run.id,
                kind=run.kind,
                source=run.source,
                playbook=run.playbook,
                status=run.status,
                started=run.started,
                finished=run.finished,
                nodes=tuple(_snapshot_view(node, snap, states[snap.id]) for node, snap in rows),
            )

    def compare(self, host: str, from_run: int | None = None, to_run: int | None = None) -> Comparison:
        """What changed on `host` between two runs (default: its last two snapshots).

        Raises:
            UsageError: unknown host, or a run in which the host has no snapshot.
        """
        with self.database.sessions() as session:
            node = self._node(session, host)
            by_run = self._snapshot_ids(session, node)
            runs = list(by_run)
            if not runs:
                raise UsageError(f"host {host!r} has no snapshots")
            for given in (from_run, to_run):
                if given is not None and given not in runs:
                    raise UsageError(
                        f"host {host!r} has no snapshot in run {given} (runs: {', '.join(map(str, runs))})"
                    )
            after = runs[-1] if to_run is None else to_run
            before = from_run
            if before is None:
                earlier = [r for r in runs if r < after]
                if not earlier:
                    return Comparison(host, None, after, ())
                before = earlier[-1]
            states = _load_states(session, [by_run[before], by_run[after]])
            drifts = drift.diff(states[by_run[before]], states[by_run[after]])
            return Comparison(host, before, after, tuple(drifts))

    def diff(self, host: str, from_run: int | None = None, to_run: int | None = None) -> list[Drift]:
        """The drift items of `compare()`."""
        return list(self.compare(host, from_run, to_run).drifts)

    # -- export ----------------------------------------------------------------------------

    def export(self, fmt: ExportFormat) -> str:
        """Every node with its latest snapshot, as JSON (nested) or CSV (one row per node)."""
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
        with self.database.sessions() as session:
            rows: list[tuple[Node, _Latest | None]] = []
            for node, sid, run_id, kind, started, source, verdict in session.execute(query):
                latest_row = None if sid is None else _Latest(sid, run_id, kind, started, source, verdict)
                rows.append((node, latest_row))
            states = _load_states(session, [snap.snapshot_id for _, snap in rows if snap is not None])
        if fmt == "json":
            nodes = [_export_node(node, snap, states) for node, snap in rows]
            return json.dumps({"nodes": nodes}, indent=2) + "\n"
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        for node, snap in rows:
            writer.writerow(_csv_row(node, snap, states))
        return buffer.getvalue()


@dataclass(frozen=True, slots=True)
class _Latest:
    snapshot_id: int
    run_id: int
    run_kind: str
    started: datetime
    source: str
    verdict: str | None


CSV_FIELDS = [
    "host",
    "pool",
    "k8s_node_name",
    "first_seen",
    "last_seen",
    "last_run",
    "verdict",
    "kernel",
    "driver",
    "cuda",
    "gpu_count",
    "gpu_model",
    "gpu_serials",
    "gpu_uuids",
    "vbios",
    "nic_guids",
    "nic_firmware",
    "nvme_serials",
]


def _export_node(node: Node, snap: _Latest | None, states: Mapping[int, HostState]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "host": node.host,
        "pool": node.pool,
        "k8s_node_name": node.k8s_node_name,
        "first_seen": _iso(node.first_seen),
        "last_seen": _iso(node.last_seen),
        "latest": None,
    }
    if snap is not None:
        state = states[snap.snapshot_id]
        out["latest"] = {
            "run_id": snap.run_id,
            "run_kind": snap.run_kind,
            "started": _iso(snap.started),
            "source": snap.source,
            "verdict": snap.verdict,
            "kernel": state.kernel,
            "driver": state.driver,
            "cuda": state.cuda,
            "labels": dict(state.labels),
            "gpus": [asdict(g) for g in state.gpus],
            "nics": [asdict(n) for n in state.nics],
            "disks": [asdict(d) for d in state.disks],
            "checks": [asdict(c) for c in state.checks],
        }
    return out


def _joined(values: Sequence[str | None]) -> str:
    return " ".join(dict.fromkeys(v for v in values if v))


def _csv_row(node: Node, snap: _Latest | None, states: Mapping[int, HostState]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "host": node.host,
        "pool": node.pool,
        "k8s_node_name": node.k8s_node_name,
        "first_seen": _iso(node.first_seen),
        "last_seen": _iso(node.last_seen),
    }
    if snap is not None:
        state = states[snap.snapshot_id]
        row |= {
            "last_run": snap.run_id,
            "verdict": snap.verdict,
            "kernel": state.kernel,
            "driver": state.driver,
            "cuda": state.cuda,
            "gpu_count": len(state.gpus),
            "gpu_model": _joined([g.name for g in state.gpus]),
            "gpu_serials": _joined([g.serial for g in state.gpus]),
            "gpu_uuids": _joined([g.uuid for g in state.gpus]),
            "vbios": _joined([g.vbios for g in state.gpus]),
            "nic_guids": _joined([n.guid for n in state.nics]),
            "nic_firmware": _joined([n.fw for n in state.nics]),
            "nvme_serials": _joined([d.serial for d in state.disks]),
        }
    return row


def open_store(url: str | None = None) -> Store:
    """Open the inventory at `url` (else `$GPURACK_DB`, else the default SQLite file).

    Raises:
        UsageError: (64) unparseable or unsupported URL.
        NotAssessedError: (2) unreachable server or unopenable file.
    """
    return Store(connect(url))
