"""`gpurack queue` as tables: the teams' queues, usage against quota, and why each pending workload waits."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpurack.formatting import plural
from gpurack.quantity import human
from gpurack.render.console import stdout_console
from gpurack.render.shapes import (
    ClusterQueueShape,
    ConditionShape,
    LocalQueueShape,
    PendingMetricShape,
    PendingWorkloadShape,
    QueueStatusShape,
)
from gpurack.render.text import cell, table


def _console() -> Console:
    # Piped into a file or a ticket, tables get room instead of rich's 80-column fallback.
    return stdout_console(width=None if sys.stdout.isatty() else 160, soft_wrap=True)


def _prometheus(metrics: Sequence[PendingMetricShape], queue: str) -> str:
    """`2 (1 active, 1 inadmissible)` from Kueue's gauge; `-` when Prometheus has no series."""
    mine = {m.status: m.value for m in metrics if m.cluster_queue == queue}
    if not mine:
        return "-"
    parts = ", ".join(f"{human('', value)} {status}" for status, value in sorted(mine.items()))
    return f"{human('', sum(mine.values()))} ({parts})"


def _active(condition: ConditionShape | None) -> str:
    if condition is None:
        return "-"
    if condition.status == "True":
        return "yes"
    return f"no: {condition.reason or condition.message or condition.status}"


def _queues(status: QueueStatusShape) -> Table:
    columns = ["queue", "cohort", "active", "local queues", "pending", "reserving", "admitted"]
    if status.metrics is not None:
        columns.append("pending (Prometheus)")
    out = table(plural(len(status.cluster_queues), "cluster queue"), *columns)
    for cq in status.cluster_queues:
        row = [cq.name, cell(cq.cohort), _active(cq.active), _local(status.local_queues, cq)]
        row += [str(cq.pending), str(cq.reserving), str(cq.admitted)]
        if status.metrics is not None:
            row.append(_prometheus(status.metrics, cq.name))
        out.add_row(*row)
    return out


def _local(local_queues: Sequence[LocalQueueShape], cq: ClusterQueueShape) -> str:
    mine = [f"{q.namespace}/{q.name}" for q in local_queues if q.cluster_queue == cq.name]
    return ", ".join(mine) or "none"


def _usage(queues: Sequence[ClusterQueueShape]) -> Table:
    columns = ("queue", "flavor", "resource", "in use / quota", "reserved", "borrowed", "borrow / lend limit")
    out = table("usage against nominal quota", *columns)
    for cq in queues:
        for use in cq.resources:
            name = use.resource
            limits = f"{human(name, use.borrowing_limit)} / {human(name, use.lending_limit)}"
            out.add_row(
                cq.name,
                use.flavor,
                name,
                f"{human(name, use.used)} / {human(name, use.nominal)}",
                human(name, use.reserved),
                human(name, use.borrowed),
                limits,
            )
    return out


def _condition(condition: ConditionShape | None) -> str:
    if condition is None:
        return "no condition yet"
    return " ".join(part for part in (condition.type, condition.status, condition.reason) if part)


def _pending(console: Console, workloads: Sequence[PendingWorkloadShape]) -> None:
    """One line per workload (queue, owner, priority, Kueue's condition), then one per reason."""
    console.print(Text(plural(len(workloads), "pending workload"), style="bold"))
    for wl in workloads:
        priority = " ".join(str(p) for p in (wl.priority_class, wl.priority) if p is not None)
        facts = [f"queue {cell(wl.local_queue)} -> {cell(wl.cluster_queue)}"]
        facts += [part for part in (wl.owner, f"priority {priority}" if priority else None) if part]
        console.print(f"{wl.namespace}/{wl.name} ({', '.join(facts)}): {_condition(wl.waiting_on)}")
        for reason in wl.reasons:
            console.print(f"  - {reason}")


def queue_status(status: QueueStatusShape) -> None:
    """The queues, their usage, and every pending workload with its reason (or that there is none)."""
    console = _console()
    if not status.cluster_queues:
        console.print("no Kueue ClusterQueues in this cluster: `gpurack run platform` creates them")
    else:
        console.print(_queues(status))
        console.print(_usage(status.cluster_queues))
    if status.pending:
        _pending(console, status.pending)
    else:
        console.print("no pending workloads")
