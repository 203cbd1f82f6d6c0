"""Where a window's GPU allocations come from, as `Job`s:

- the acceptance runs in the inventory DB: `gpurack accept` recorded each one from Kueue's
  admission to its job's end (the pods' lifetimes), with its outcome and accepted units;
- with `--kueue`, the Workloads Kueue still holds in the cluster: an admitted Workload holds its
  pod sets' GPUs on its flavor's pool from its `QuotaReserved` time to its `Finished` time (or
  now, while it runs); one that finished with reason `Failed` is a failed run, any other is
  allocated work that delivered no accepted units. A Workload of a recorded run is not counted
  twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance import (
    GPU_RESOURCES,
    api_time,
    assigned_pool,
    true_condition,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost import Allocation

from gpurack.quantity import parse_quantity
from gpurack.records import AcceptanceView

SOURCE_ACCEPTANCE = "acceptance"
SOURCE_KUEUE = "kueue"


@dataclass(frozen=True, slots=True)
class Job:
    """One allocation with where it came from and what a person needs to recognise it."""

    name: str
    namespace: str
    source: str
    allocation: Allocation
    queue_wait_s: float | None


def from_runs(views: Sequence[AcceptanceView]) -> list[Job]:
    """The recorded acceptance runs as allocations."""
    return [
        Job(
            name=view.record.name,
            namespace=view.record.team,
            source=SOURCE_ACCEPTANCE,
            allocation=Allocation(
                pool=view.record.pool,
                gpus=view.record.gpus,
                start=view.record.started,
                end=view.record.finished,
                outcome=view.record.outcome,
                units=view.record.units,
            ),
            queue_wait_s=view.record.queue_wait_s,
        )
        for view in views
        if view.record.pool
    ]


def _requested(pod_set: Mapping[str, Any]) -> float:
    """GPUs one pod of a pod set requests (its containers' requests, else their limits)."""
    spec = (pod_set.get("template") or {}).get("spec") or {}
    total = 0.0
    for container in spec.get("containers") or []:
        resources = container.get("resources") or {}
        wanted = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        total += sum(parse_quantity(wanted.get(name)) or 0.0 for name in GPU_RESOURCES)
    return total


def _gpus(workload: Mapping[str, Any]) -> int:
    """The GPUs Kueue admitted: each pod set assignment's `resourceUsage`, else its count times
    what one pod of the pod set asks for."""
    assignments = ((workload.get("status") or {}).get("admission") or {}).get("podSetAssignments") or []
    pod_sets = {p.get("name"): p for p in (workload.get("spec") or {}).get("podSets") or []}
    total = 0.0
    for assignment in assignments:
        usage = assignment.get("resourceUsage") or {}
        used = [parse_quantity(usage.get(name)) for name in GPU_RESOURCES if name in usage]
        if used:
            total += sum(u or 0.0 for u in used)
            continue
        pod_set = pod_sets.get(assignment.get("name")) or {}
        count = assignment.get("count", pod_set.get("count", 1))
        total += (count if isinstance(count, int) else 1) * _requested(pod_set)
    return round(total)


def _owner(workload: Mapping[str, Any]) -> str:
    owners = (workload.get("metadata") or {}).get("ownerReferences") or []
    return str(owners[0].get("name") or "") if owners and isinstance(owners[0], Mapping) else ""


def from_workloads(workloads: Sequence[Mapping[str, Any]], recorded: set[str], now: datetime) -> list[Job]:
    """Kueue's admitted GPU Workloads as allocations, leaving out those of `recorded` runs (by
    their Job's name) and those that hold no GPUs or never held quota."""
    jobs = []
    for workload in workloads:
        meta = workload.get("metadata") or {}
        owner = _owner(workload)
        reserved = true_condition(workload, "QuotaReserved")
        start = api_time((reserved or {}).get("lastTransitionTime"))
        gpus, pool = _gpus(workload), assigned_pool(workload)
        if owner in recorded or start is None or gpus <= 0 or not pool:
            continue
        finished = true_condition(workload, "Finished")
        end = api_time((finished or {}).get("lastTransitionTime")) or now
        created = api_time(meta.get("creationTimestamp"))
        jobs.append(
            Job(
                name=owner or str(meta.get("name") or ""),
                namespace=str(meta.get("namespace") or ""),
                source=SOURCE_KUEUE,
                allocation=Allocation(
                    pool=pool,
                    gpus=gpus,
                    start=start,
                    end=max(end, start),
                    outcome="failed" if (finished or {}).get("reason") == "Failed" else "other",
                ),
                queue_wait_s=(start - created).total_seconds() if created is not None else None,
            )
        )
    return jobs
