"""The cost document of a window: what the cluster cost by the seed's formula
(module_utils/cost/model.py), over the allocations of `allocations`, as the one document that
cost.json, cost.md and cost.html render (gpurack.report.cost_page).

Pure: `gpurack.cost.window` reads the DB, the inventory and the cluster and passes what it
read in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost import (
    Allocation,
    Baseline,
    BaselineComparison,
    Cost,
    CostError,
    Window,
    against,
    cost,
)

from gpurack.cost.allocations import Job
from gpurack.cost.inputs import CostInputs
from gpurack.errors import UsageError

KIND = "gpurack-cost"


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def allocation_steps(jobs: Sequence[Job], window: Window) -> dict[str, list[tuple[str, int]]]:
    """Per pool, the GPUs allocated over the window as steps: (time, GPUs from then on), the
    window's start first."""
    steps: dict[str, list[tuple[str, int]]] = {}
    for pool in sorted({job.allocation.pool for job in jobs}):
        changes: dict[datetime, int] = {window.since: 0}
        for job in jobs:
            a = job.allocation
            start, end = max(a.start, window.since), min(a.end, window.until)
            if a.pool != pool or end <= start:
                continue
            changes[start] = changes.get(start, 0) + a.gpus
            changes[end] = changes.get(end, 0) - a.gpus
        level, points = 0, []
        for moment in sorted(changes):
            level += changes[moment]
            points.append((_iso(moment), level))
        steps[pool] = points
    return steps


def observed(requested: Window, now: datetime, first: datetime | None) -> tuple[Window, list[str]]:
    """The part of the requested window that was observed, and a note for each end moved.

    Nothing after `now` has been observed, and nothing before `first`, the earliest moment
    the inventory database or the cluster recorded: pricing either would count GPUs as idle
    that nobody watched.

    Raises:
        UsageError: no part of the window was observed.
    """
    since, until, notes = requested.since, requested.until, []
    if until > now:
        until = now
        ends = _iso(requested.until)
        notes.append(f"the window ends in the future ({ends}): costed up to now ({_iso(now)})")
    if first is None:
        raise UsageError("nothing to cost: the inventory database records no run and no allocation was read")
    if since < first:
        since = first
        starts = _iso(requested.since)
        notes.append(f"nothing was recorded before {_iso(first)}: costed from then, not from {starts}")
    if until <= since:
        raise UsageError(
            f"nothing was observed from {_iso(requested.since)} to {_iso(requested.until)}: "
            f"records start at {_iso(first)} and end now, {_iso(now)}"
        )
    return Window(since, until), notes


def impossible(job: Job, capacity: Mapping[str, int]) -> str | None:
    """Why a recorded allocation cannot have happened, or None: such a job is listed, not priced."""
    a = job.allocation
    if a.end < a.start:
        return f"it ends ({_iso(a.end)}) before it starts ({_iso(a.start)})"
    if a.gpus < 0 or a.units < 0:
        return f"a negative count ({a.gpus} GPUs, {a.units} units)"
    if a.pool not in capacity:
        return f"pool {a.pool} is not in the inventory"
    if a.gpus > capacity[a.pool]:
        return f"it holds {a.gpus} GPUs, more than pool {a.pool} has ({capacity[a.pool]})"
    return None


def _touches(a: Allocation, window: Window) -> bool:
    return min(a.start, a.end) < window.until and max(a.start, a.end) > window.since


def _pool_rows(result: Cost) -> list[dict[str, Any]]:
    return [
        {k: round(v, 6) if isinstance(v, float) else v for k, v in asdict(p).items()} for p in result.pools
    ]


def _terms(result: Cost) -> dict[str, float]:
    names = ("compute", "network", "storage", "support", "idle", "failed_runs", "operations")
    terms = {name: round(float(getattr(result, name)), 6) for name in names}
    terms["total"] = round(result.total, 6)
    return terms


def _job_row(job: Job, window: Window) -> dict[str, Any]:
    a = job.allocation
    return {
        "name": job.name,
        "namespace": job.namespace,
        "source": job.source,
        "pool": a.pool,
        "gpus": a.gpus,
        "start": _iso(a.start),
        "end": _iso(a.end),
        "gpu_hours_in_window": round(a.gpus * a.hours_in(window), 6),
        "outcome": a.outcome,
        "units": a.units,
        "queue_wait_s": job.queue_wait_s,
    }


def _window_doc(window: Window, clipped: Sequence[str]) -> dict[str, Any]:
    return {
        "since": _iso(window.since),
        "until": _iso(window.until),
        "hours": round(window.hours, 6),
        "clipped": list(clipped),
    }


def _baseline_doc(baseline: Baseline | None, comparison: BaselineComparison | None) -> dict[str, Any] | None:
    if baseline is None or comparison is None:
        return None
    return {
        "kind": baseline.kind,
        "price": baseline.price,
        "cost": round(comparison.baseline_cost, 6),
        "ratio": None if comparison.ratio is None else round(comparison.ratio, 4),
    }


def build(
    window: Window,
    inputs: CostInputs,
    jobs: Sequence[Job],
    baseline: Baseline | None,
    sources: Sequence[str],
    *,
    clipped: Sequence[str] = (),
) -> dict[str, Any]:
    """The cost document of `window` over `jobs`; `clipped` says how the window was narrowed.

    A job that cannot have happened (`impossible`) is listed with its reason and not priced.

    Raises:
        UsageError: the inputs cannot be costed.
    """
    reasons = {id(job): impossible(job, inputs.capacity) for job in jobs}
    refused = [job for job in jobs if reasons[id(job)] and _touches(job.allocation, window)]
    inside = [job for job in jobs if not reasons[id(job)] and job.allocation.hours_in(window) > 0]
    try:
        result = cost(window, inputs.capacity, [job.allocation for job in inside], inputs.prices)
        comparison = against(result, baseline) if baseline is not None else None
    except CostError as error:
        raise UsageError(f"cannot cost the window: {error}") from None
    pools = _pool_rows(result)
    return {
        "kind": KIND,
        "window": _window_doc(window, clipped),
        "currency": inputs.currency,
        "sources": list(sources),
        "terms": _terms(result),
        "accepted_units": result.accepted_units,
        "effective_cost": None if result.effective_cost is None else round(result.effective_cost, 9),
        "gpu_hours": {
            key: round(sum(p[f"{key}_gpu_hours"] for p in pools), 6)
            for key in ("capacity", "allocated", "useful", "failed", "idle")
        },
        "pools": pools,
        "baseline": _baseline_doc(baseline, comparison),
        "jobs": [_job_row(job, window) for job in sorted(inside, key=lambda j: j.allocation.start)],
        "impossible": [
            {**_job_row(job, window), "gpu_hours_in_window": 0.0, "why": reasons[id(job)]}
            for job in sorted(refused, key=lambda j: j.allocation.start)
        ],
        "allocation": allocation_steps(inside, window),
        "capacity": dict(sorted(inputs.capacity.items())),
    }
