"""The database's rows as the driver's records: node summaries, history, snapshots, runs,
patches and acceptance runs."""

from __future__ import annotations

from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost import Outcome
from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from gpurack.db.damage import check_entity, check_values
from gpurack.db.models import (
    AcceptanceRun,
    CheckResult,
    Gpu,
    Node,
    NodePatch,
    Run,
    RunResult,
    Snapshot,
)
from gpurack.errors import UsageError
from gpurack.hoststate import HostState
from gpurack.records import (
    RUNS_WITHOUT_SNAPSHOTS,
    AcceptanceRecord,
    AcceptanceView,
    HistoryEntry,
    NodeHead,
    NodeSummary,
    PatchRecord,
    SnapshotView,
    patch_outcome,
)


def node_row(session: Session, host: str) -> Node:
    node = session.scalar(select(Node).where(Node.host == host))
    if node is None:
        raise UsageError(f"unknown host {host!r}: not in the inventory (see gpurack inventory list)")
    return check_entity(node)  # type: ignore[no-any-return]


def summary(row: Any) -> NodeSummary:
    node, runs, sid, run_id, verdict, driver, gpus, model = row
    check_entity(node)
    if sid is not None:
        check_values(Snapshot.__table__, sid, {"verdict": verdict, "driver": driver})
        check_values(Gpu.__table__, f"of snapshot {sid}", {"name": model})
    return NodeSummary(
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


def history_entry(row: Any) -> HistoryEntry:
    run, sid, source, verdict, kernel, driver, cuda, gpus = row
    check_entity(run)
    check_values(
        Snapshot.__table__,
        sid,
        {"source": source, "verdict": verdict, "kernel": kernel, "driver": driver, "cuda": cuda},
    )
    return HistoryEntry(
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


def run_row(session: Session, run_id: int | None) -> Run:
    """Run `run_id`; by default the latest that holds snapshots (not a fabric or accept run)."""
    reported = select(func.max(Run.id)).where(Run.kind.not_in(RUNS_WITHOUT_SNAPSHOTS))
    wanted = run_id if run_id is not None else session.scalar(reported)
    if wanted is None:
        raise UsageError("no runs recorded yet: `gpurack validate` and `gpurack run` record them")
    run = session.get(Run, wanted)
    if run is None:
        latest = session.scalar(select(func.max(Run.id)))
        raise UsageError(f"unknown run {wanted}: not in the inventory (runs 1 to {latest or 0})")
    return check_entity(run)  # type: ignore[no-any-return]


def snapshot_ids(session: Session, node: Node) -> dict[int, int]:
    query = select(Snapshot.run_id, Snapshot.id).where(Snapshot.node_id == node.id).order_by(Snapshot.run_id)
    return {run_id: sid for run_id, sid in session.execute(query)}


def head(node: Node) -> NodeHead:
    return NodeHead(node.host, node.pool, node.k8s_node_name, node.first_seen, node.last_seen)


def result_dict(row: CheckResult) -> dict[str, object]:
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


def snapshot_view(node: Node, snap: Snapshot, state: HostState) -> SnapshotView:
    for entity in (node, snap, snap.run, *snap.checks):
        check_entity(entity)
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
        results=tuple(result_dict(c) for c in snap.checks),
        state=state,
    )


def run_patches(session: Session, run_id: int) -> tuple[PatchRecord, ...]:
    query = (
        select(Node.host, NodePatch)
        .join(NodePatch, NodePatch.node_id == Node.id)
        .where(NodePatch.run_id == run_id)
        .order_by(Node.host)
    )
    return tuple(patch_record(host, row) for host, row in session.execute(query))


def run_results(session: Session, run_id: int) -> tuple[dict[str, Any], ...]:
    """The results of a run about the cluster (conformance), in their order."""
    query = select(RunResult).where(RunResult.run_id == run_id).order_by(RunResult.position)
    return tuple(dict(check_entity(row).result) for row in session.scalars(query))


def patch_record(host: str, row: NodePatch) -> PatchRecord:
    check_entity(row)
    return PatchRecord(
        host=host,
        outcome=patch_outcome(row.outcome),
        node=row.k8s_node,
        reason=row.reason,
        drain_s=row.drain_s,
        update_s=row.update_s,
        reboot_s=row.reboot_s,
        validation_s=row.validation_s,
        kernel_before=row.kernel_before,
        kernel_after=row.kernel_after,
        driver_before=row.driver_before,
        driver_after=row.driver_after,
        rebooted=row.rebooted,
        validation=row.validation,
        maintenance_run=row.maintenance_run,
    )


def run_acceptance(session: Session, run_id: int) -> AcceptanceView | None:
    query = (
        select(AcceptanceRun).where(AcceptanceRun.run_id == run_id).options(selectinload(AcceptanceRun.steps))
    )
    row = session.scalar(query)
    return None if row is None else acceptance_view(row)


def acceptance_view(row: AcceptanceRun) -> AcceptanceView:
    for entity in (row, *row.steps):
        check_entity(entity)
    outcome: Outcome = (
        "accepted" if row.outcome == "accepted" else "failed" if row.outcome == "failed" else "other"
    )
    record = AcceptanceRecord(
        name=row.name,
        team=row.team,
        queue=row.queue,
        pool=row.pool,
        pods=row.pods,
        gpus=row.gpus,
        started=row.started,
        finished=row.finished,
        outcome=outcome,
        units=row.units,
        verdict=row.verdict,
        results=tuple(step.result for step in row.steps),
        queue_wait_s=row.queue_wait_s,
        cost_total=row.cost_total,
        cost_per_unit=row.cost_per_unit,
        currency=row.currency,
    )
    return AcceptanceView(run_id=row.run_id, record=record)
