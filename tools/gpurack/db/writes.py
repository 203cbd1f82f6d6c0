"""Write one run and its snapshots: a Run row, upserted Nodes, Snapshots and their child rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from gpurack.db.models import Base, CheckResult, Disk, Gpu, Nic, Node, Run, Snapshot, utcnow
from gpurack.db.states import chunks
from gpurack.hoststate import GpuState
from gpurack.records import NodeRecord, RunRecord, SnapshotRow


def write_run(session: Session, run: RunRecord, rows: Sequence[SnapshotRow]) -> int:
    """Insert the run, upsert its nodes and insert one snapshot per row; return the run id."""
    started = run.started or utcnow()
    seen = run.finished or started
    run_row = Run(
        started=started,
        finished=run.finished,
        kind=run.kind,
        source=run.source,
        playbook=run.playbook,
        status=run.status,
    )
    session.add(run_row)
    node_ids = upsert_nodes(session, [r.node for r in rows], seen)
    session.flush()
    if not rows:
        return run_row.id
    snapshot_ids = list(
        session.scalars(
            insert(Snapshot).returning(Snapshot.id, sort_by_parameter_order=True),
            [_snapshot_row(run_row.id, node_ids[r.node.host], r) for r in rows],
        )
    )
    _insert_children(session, snapshot_ids, rows)
    return run_row.id


def _snapshot_row(run_id: int, node_id: int, row: SnapshotRow) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "node_id": node_id,
        "source": row.node.source,
        "facts": dict(row.node.facts),
        "labels": dict(row.node.labels),
        "kernel": row.state.kernel,
        "driver": row.state.driver,
        "cuda": row.state.cuda,
        "verdict": row.verdict,
    }


def upsert_nodes(session: Session, nodes: Sequence[NodeRecord], seen: datetime) -> dict[str, int]:
    """Create or update the Node of each record; return host -> node id."""
    existing: dict[str, Node] = {}
    for chunk in chunks([n.host for n in nodes]):
        existing.update((row.host, row) for row in session.scalars(select(Node).where(Node.host.in_(chunk))))
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


def _insert_children(session: Session, snapshot_ids: Sequence[int], rows: Sequence[SnapshotRow]) -> None:
    """GPU, NIC, disk and check rows of every snapshot, one executemany per table."""
    gpus: list[dict[str, Any]] = []
    nics: list[dict[str, Any]] = []
    disks: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    for sid, row in zip(snapshot_ids, rows, strict=True):
        gpus.extend(_gpu_row(sid, g) for g in row.state.gpus)
        nics.extend({"snapshot_id": sid, **asdict(n)} for n in row.state.nics)
        disks.extend({"snapshot_id": sid, **asdict(d)} for d in row.state.disks)
        checks.extend(_result_row(sid, r) for r in row.node.results if r.get("id") and r.get("verdict"))
    # Core executemany, not ORM bulk inserts: these rows never become objects in this session.
    connection = session.connection()
    models: tuple[tuple[type[Base], list[dict[str, Any]]], ...] = (
        (Gpu, gpus),
        (Nic, nics),
        (Disk, disks),
        (CheckResult, checks),
    )
    for model, values in models:
        if values:
            connection.execute(insert(model), values)


def _gpu_row(snapshot_id: int, gpu: GpuState) -> dict[str, Any]:
    values = asdict(gpu)
    return {"snapshot_id": snapshot_id, "gpu_index": values.pop("index"), **values}


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
