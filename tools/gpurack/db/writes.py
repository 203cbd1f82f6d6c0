"""Write one run and its snapshots: a Run row, upserted Nodes, Snapshots and their child rows.

Runs and snapshots are new rows with ids of their own; only nodes are shared between runs, so
only they are upserted. A fabric run is written the same way, with SwitchLink rows (where
each NIC was seen cabled) instead of snapshots, and an accept run with its AcceptanceRun and
steps. A patch run writes, beside any snapshots, one NodePatch per host it patched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, insert
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from gpurack.db.models import (
    AcceptanceRun,
    AcceptanceStep,
    Base,
    CheckResult,
    Disk,
    Gpu,
    Nic,
    Node,
    NodePatch,
    Run,
    RunResult,
    Snapshot,
    SwitchLink,
    utcnow,
)
from gpurack.hoststate import GpuState
from gpurack.records import (
    AcceptanceRecord,
    LinkRecord,
    NodeRecord,
    PatchRecord,
    RunRecord,
    SnapshotRow,
)


def write_run(
    session: Session, run: RunRecord, rows: Sequence[SnapshotRow], patches: Sequence[PatchRecord] = ()
) -> int:
    """Insert the run, upsert its nodes, insert one snapshot per row and one NodePatch per patch;
    return the run id."""
    run_row, seen = _add_run(session, run)
    snapshot_hosts = {r.node.host for r in rows}
    # One upsert row per host: PostgreSQL refuses an ON CONFLICT that touches a row twice.
    patched = [
        NodeRecord(host=p.host, pool=None, source=run.source, facts={})
        for p in patches
        if p.host not in snapshot_hosts
    ]
    node_ids = upsert_nodes(session, [*(r.node for r in rows), *patched], seen)
    session.flush()
    if patches:
        session.connection().execute(
            insert(NodePatch), [_patch_row(run_row.id, node_ids[p.host], p) for p in patches]
        )
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


def write_links(session: Session, run: RunRecord, links: Mapping[str, Sequence[LinkRecord]]) -> int:
    """Insert the fabric run, upsert its hosts and insert one SwitchLink per host NIC; return the run id."""
    run_row, seen = _add_run(session, run)
    hosts = [NodeRecord(host=host, pool=None, source=run.source, facts={}) for host in links]
    node_ids = upsert_nodes(session, hosts, seen)
    session.flush()
    values = [
        {
            "run_id": run_row.id,
            "node_id": node_ids[host],
            "nic": link.nic,
            "switch": link.switch,
            "port": link.port,
            "neighbor": link.neighbor,
        }
        for host, nics in links.items()
        for link in nics
    ]
    if values:
        session.connection().execute(insert(SwitchLink), values)
    return run_row.id


def _patch_row(run_id: int, node_id: int, patch: PatchRecord) -> dict[str, Any]:
    values = asdict(patch)
    del values["host"]
    return {"run_id": run_id, "node_id": node_id, "k8s_node": values.pop("node"), **values}


def _add_run(session: Session, run: RunRecord) -> tuple[Run, datetime]:
    """The new Run row (added, not flushed) and when its nodes count as last seen."""
    started = run.started or utcnow()
    run_row = Run(
        started=started,
        finished=run.finished,
        kind=run.kind,
        source=run.source,
        playbook=run.playbook,
        status=run.status,
    )
    session.add(run_row)
    return run_row, run.finished or started


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
    """Create or update the Node of each record in one INSERT ... ON CONFLICT; return host -> node id.

    Atomic: two processes recording the same new host both get its one row. Hosts go in sorted
    order, so two PostgreSQL transactions lock the rows they share in the same order.
    """
    if not nodes:
        return {}
    values = [
        {
            "host": n.host,
            "pool": n.pool,
            "k8s_node_name": n.k8s_node_name,
            "first_seen": seen,
            "last_seen": seen,
        }
        for n in sorted(nodes, key=lambda n: n.host)
    ]
    rows = session.execute(_upsert(session.get_bind().dialect.name), values)
    return {host: node_id for node_id, host in rows}


def _upsert(dialect: str) -> Any:
    """INSERT a node; a host already there keeps its earliest first_seen and known pool and name.

    One statement for any number of nodes (executemany, RETURNING through SQLAlchemy's
    insertmanyvalues), so it is compiled once per process.
    """
    statement = (postgresql_insert if dialect == "postgresql" else sqlite_insert)(Node)
    new = statement.excluded
    return statement.on_conflict_do_update(
        index_elements=[Node.host],
        set_={
            "first_seen": case((new.first_seen < Node.first_seen, new.first_seen), else_=Node.first_seen),
            "last_seen": case((new.last_seen > Node.last_seen, new.last_seen), else_=Node.last_seen),
            "pool": func.coalesce(new.pool, Node.pool),
            "k8s_node_name": func.coalesce(new.k8s_node_name, Node.k8s_node_name),
        },
    ).returning(Node.id, Node.host)


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


def write_acceptance(session: Session, run: RunRecord, acceptance: AcceptanceRecord) -> int:
    """Insert the accept run, its AcceptanceRun and one AcceptanceStep per row; return the run id."""
    run_row, _ = _add_run(session, run)
    session.flush()
    fields = {k: v for k, v in asdict(acceptance).items() if k != "results"}
    row = AcceptanceRun(run_id=run_row.id, **fields)
    session.add(row)
    session.flush()
    steps = [
        {
            "acceptance_run_id": row.id,
            "position": position,
            "result": dict(result),
            "check_id": str(result.get("id") or ""),
            "verdict": str(result.get("verdict") or ""),
        }
        for position, result in enumerate(acceptance.results, start=1)
    ]
    if steps:
        session.connection().execute(insert(AcceptanceStep), steps)
    return run_row.id


def write_run_results(session: Session, run: RunRecord, results: Sequence[Mapping[str, Any]]) -> int:
    """Insert a run whose results are about the cluster (conformance) and one RunResult per
    result, in order; return the run id."""
    run_row, _ = _add_run(session, run)
    session.flush()
    rows = [
        {
            "run_id": run_row.id,
            "position": position,
            "check_id": str(result.get("id") or ""),
            "verdict": str(result.get("verdict") or ""),
            "result": dict(result),
        }
        for position, result in enumerate(results, start=1)
    ]
    if rows:
        session.connection().execute(insert(RunResult), rows)
    return run_row.id
