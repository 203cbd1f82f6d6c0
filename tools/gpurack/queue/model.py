"""Kueue's queue objects as frozen records: what `gpurack queue` shows, parsed from the API's dicts.

Pure functions over the kueue.x-k8s.io/v1beta2 objects as the API returns them (ClusterQueue,
LocalQueue, Workload; see sigs.k8s.io/kueue apis/kueue/v1beta2): usage against nominal quota
per flavor and resource, and every pending workload with the condition it waits on and the
quota that blocks it, parsed from Kueue's flavor-assigner message where it matches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpurack import coerce
from gpurack.quantity import human, parse_quantity

# The Workload conditions that say why a workload waits or was put back (workload_types.go).
WAIT_CONDITIONS = ("QuotaReserved", "Admitted", "Evicted", "Preempted")

# pkg/scheduler/flavorassigner/flavorassigner.go: Assignment.Message() and Status.appendf().
_POD_SET = re.compile(r"couldn't assign flavors to pod set (?P<pod_set>[^:]+): (?P<reasons>.*)")
_UNUSED = re.compile(
    r"insufficient unused quota for (?P<resource>\S+) in flavor (?P<flavor>[^\s,]+), "
    r"(?P<need>\S+) more needed"
)
_CAPACITY = re.compile(
    r"insufficient quota for (?P<resource>\S+) in flavor (?P<flavor>[^\s,]+), previously considered "
    r"podsets requests \((?P<previous>[^)]*)\) \+ current podset request \((?P<request>[^)]*)\) > "
    r"maximum capacity \((?P<capacity>[^)]*)\)"
)


@dataclass(frozen=True, slots=True)
class ResourceUse:
    """One resource of one flavor of a ClusterQueue: its quota and what is reserved and admitted."""

    flavor: str
    resource: str
    nominal: float | None  # None: the queue has no quota for it (usage only)
    borrowing_limit: float | None
    lending_limit: float | None
    reserved: float  # status.flavorsReservation: quota held by workloads with QuotaReserved
    used: float  # status.flavorsUsage: quota of admitted workloads
    borrowed: float  # of `used`, what comes from the cohort beyond nominal


@dataclass(frozen=True, slots=True)
class ClusterQueueView:
    name: str
    cohort: str | None
    pending: int
    reserving: int
    admitted: int
    active: Condition | None  # the queue's Active condition
    resources: tuple[ResourceUse, ...]


@dataclass(frozen=True, slots=True)
class LocalQueueView:
    namespace: str
    name: str
    cluster_queue: str | None
    pending: int
    reserving: int
    admitted: int


@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    status: str
    reason: str | None
    message: str | None


@dataclass(frozen=True, slots=True)
class Blocker:
    """A quota that keeps a pod set out, from Kueue's message; `shortfall` in the resource's units."""

    pod_set: str | None
    flavor: str
    resource: str
    shortfall: float | None
    shortfall_text: str
    nominal: float | None  # the ClusterQueue's quota for it, where known
    used: float | None
    kind: str  # "unused" (quota in use by others) | "capacity" (more than the queue may ever have)


@dataclass(frozen=True, slots=True)
class PendingWorkload:
    namespace: str
    name: str
    local_queue: str | None
    cluster_queue: str | None
    priority_class: str | None
    priority: int | None
    owner: str | None  # "Job/train-3"
    created: str | None
    conditions: tuple[Condition, ...]  # those of WAIT_CONDITIONS present
    waiting_on: Condition | None  # the condition that says why
    blockers: tuple[Blocker, ...]
    reasons: tuple[str, ...]  # one line per blocker, else Kueue's message (or reason)


@dataclass(frozen=True, slots=True)
class PendingMetric:
    """One series of Kueue's `kueue_pending_workloads` (status: active | inadmissible)."""

    cluster_queue: str
    status: str
    value: float


@dataclass(frozen=True, slots=True)
class QueueStatus:
    cluster_queues: tuple[ClusterQueueView, ...]
    local_queues: tuple[LocalQueueView, ...]
    pending: tuple[PendingWorkload, ...]
    metrics: tuple[PendingMetric, ...] | None  # None: Prometheus not asked


# ---------------------------------------------------------------------------------------------
# helpers


def _str(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _conditions(obj: Mapping[str, Any]) -> dict[str, Condition]:
    out = {}
    for item in coerce.mappings(coerce.mapping(obj.get("status")).get("conditions")):
        kind = _str(item.get("type"))
        if kind:
            out[kind] = Condition(
                kind, str(item.get("status", "Unknown")), _str(item.get("reason")), _str(item.get("message"))
            )
    return out


def _name(obj: Mapping[str, Any]) -> str:
    return str(coerce.mapping(obj.get("metadata")).get("name", ""))


def _namespace(obj: Mapping[str, Any]) -> str:
    return str(coerce.mapping(obj.get("metadata")).get("namespace", ""))


# ---------------------------------------------------------------------------------------------
# ClusterQueue and LocalQueue


def _totals(usage: Any) -> dict[tuple[str, str], tuple[float, float]]:
    """(flavor, resource) -> (total, borrowed) of a flavorsUsage / flavorsReservation list."""
    out = {}
    for flavor in coerce.mappings(usage):
        for res in coerce.mappings(flavor.get("resources")):
            key = (str(flavor.get("name", "")), str(res.get("name", "")))
            out[key] = (parse_quantity(res.get("total")) or 0.0, parse_quantity(res.get("borrowed")) or 0.0)
    return out


def _quotas(spec: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
    """(flavor, resource) -> its spec.resourceGroups[].flavors[].resources[] entry, in spec order."""
    out = {}
    for group in coerce.mappings(spec.get("resourceGroups")):
        for flavor in coerce.mappings(group.get("flavors")):
            for res in coerce.mappings(flavor.get("resources")):
                out[(str(flavor.get("name", "")), str(res.get("name", "")))] = res
    return out


def _resource_use(
    key: tuple[str, str],
    quota: Mapping[str, Any] | None,
    usage: Mapping[tuple[str, str], tuple[float, float]],
    reserved: Mapping[tuple[str, str], tuple[float, float]],
) -> ResourceUse:
    given = quota or {}
    used, borrowed = usage.get(key, (0.0, 0.0))
    return ResourceUse(
        flavor=key[0],
        resource=key[1],
        nominal=None if quota is None else parse_quantity(given.get("nominalQuota")) or 0.0,
        borrowing_limit=parse_quantity(given.get("borrowingLimit")),
        lending_limit=parse_quantity(given.get("lendingLimit")),
        reserved=reserved.get(key, (0.0, 0.0))[0],
        used=used,
        borrowed=borrowed,
    )


def cluster_queue(obj: Mapping[str, Any]) -> ClusterQueueView:
    """A ClusterQueue's quotas, usage and counts; usage without a quota is listed after the quotas."""
    spec, status = coerce.mapping(obj.get("spec")), coerce.mapping(obj.get("status"))
    quotas = _quotas(spec)
    usage, reserved = _totals(status.get("flavorsUsage")), _totals(status.get("flavorsReservation"))
    keys = dict.fromkeys([*quotas, *usage, *reserved])
    return ClusterQueueView(
        name=_name(obj),
        cohort=_str(spec.get("cohortName")),
        pending=_int(status.get("pendingWorkloads")),
        reserving=_int(status.get("reservingWorkloads")),
        admitted=_int(status.get("admittedWorkloads")),
        active=_conditions(obj).get("Active"),
        resources=tuple(_resource_use(key, quotas.get(key), usage, reserved) for key in keys),
    )


def local_queue(obj: Mapping[str, Any]) -> LocalQueueView:
    """A LocalQueue: its ClusterQueue and counts."""
    spec, status = coerce.mapping(obj.get("spec")), coerce.mapping(obj.get("status"))
    return LocalQueueView(
        namespace=_namespace(obj),
        name=_name(obj),
        cluster_queue=_str(spec.get("clusterQueue")),
        pending=_int(status.get("pendingWorkloads")),
        reserving=_int(status.get("reservingWorkloads")),
        admitted=_int(status.get("admittedWorkloads")),
    )


# ---------------------------------------------------------------------------------------------
# Workloads


def _is_pending(conditions: Mapping[str, Condition]) -> bool:
    """Neither holding quota nor finished: the workload waits (or was put back)."""
    reserved = conditions.get("QuotaReserved")
    finished = conditions.get("Finished")
    return not (reserved and reserved.status == "True") and not (finished and finished.status == "True")


def _waiting_on(conditions: Mapping[str, Condition]) -> Condition | None:
    """The condition that says why: QuotaReserved False, else an eviction or preemption in force."""
    reserved = conditions.get("QuotaReserved")
    if reserved is not None and reserved.status == "False":
        return reserved
    for kind in ("Evicted", "Preempted", "Admitted"):
        found = conditions.get(kind)
        if found is not None and (found.status == "True") == (kind != "Admitted"):
            return found
    return reserved


def _blocker(found: re.Match[str], kind: str, pod_set: str | None, use: ResourceUse | None) -> Blocker:
    if kind == "unused":
        shortfall, text = parse_quantity(found["need"]), found["need"]
    else:
        needed = [parse_quantity(found[k]) for k in ("previous", "request", "capacity")]
        previous, request, capacity = (n or 0.0 for n in needed)
        shortfall, text = (
            previous + request - capacity,
            f"{found['request']} requested, {found['capacity']} at most",
        )
    return Blocker(
        pod_set=pod_set,
        flavor=found["flavor"],
        resource=found["resource"],
        shortfall=shortfall,
        shortfall_text=text,
        nominal=use.nominal if use else None,
        used=use.used if use else None,
        kind=kind,
    )


def _blockers(message: str, uses: Mapping[tuple[str, str], ResourceUse]) -> tuple[Blocker, ...]:
    """The quotas named by a flavor-assigner message, with the queue's quota and use for each."""
    out = []
    for segment in message.split("; "):
        matched = _POD_SET.match(segment)
        pod_set, reasons = (matched["pod_set"], matched["reasons"]) if matched else (None, segment)
        for pattern, kind in ((_UNUSED, "unused"), (_CAPACITY, "capacity")):
            out += [
                _blocker(found, kind, pod_set, uses.get((found["flavor"], found["resource"])))
                for found in pattern.finditer(reasons)
            ]
    return tuple(out)


def blocker_text(blocker: Blocker) -> str:
    """`nvidia.com/gpu in flavor lab-h200x1: 1 more needed (quota 1, in use 1)`."""
    where = f"{blocker.resource} in flavor {blocker.flavor}"
    if blocker.pod_set and blocker.pod_set != "main":
        where = f"pod set {blocker.pod_set}: {where}"
    quota = ""
    if blocker.nominal is not None:
        nominal, used = human(blocker.resource, blocker.nominal), human(blocker.resource, blocker.used)
        quota = f" (quota {nominal}, in use {used})"
    if blocker.kind == "capacity":
        return f"{where}: more than the queue can ever get, {blocker.shortfall_text}{quota}"
    return f"{where}: {human(blocker.resource, blocker.shortfall)} more needed{quota}"


def _reasons(
    conditions: Mapping[str, Condition], waiting: Condition | None, blockers: Sequence[Blocker]
) -> tuple[str, ...]:
    if blockers:
        return tuple(blocker_text(b) for b in blockers)
    if waiting is None:
        return ("not yet seen by Kueue's scheduler (no QuotaReserved condition)",)
    text = waiting.message or waiting.reason or f"{waiting.type} {waiting.status}"
    preempted = conditions.get("Preempted")
    if preempted is not None and preempted.status == "True" and preempted.reason:
        return (f"preempted ({preempted.reason}): {text}",)
    return (text,)


def _owner(meta: Mapping[str, Any]) -> str | None:
    owners = coerce.mappings(meta.get("ownerReferences"))
    return f"{owners[0].get('kind')}/{owners[0].get('name')}" if owners else None


def pending_workload(
    obj: Mapping[str, Any],
    cluster_queues: Mapping[str, ClusterQueueView],
    local_queues: Mapping[tuple[str, str], LocalQueueView],
) -> PendingWorkload | None:
    """A Workload that waits, with why; None when it holds quota or finished."""
    conditions = _conditions(obj)
    if not _is_pending(conditions):
        return None
    meta, spec = coerce.mapping(obj.get("metadata")), coerce.mapping(obj.get("spec"))
    namespace, queue = _namespace(obj), _str(spec.get("queueName"))
    lq = local_queues.get((namespace, queue or ""))
    cq_name = _str(
        coerce.mapping(coerce.mapping(obj.get("status")).get("admission")).get("clusterQueue")
    ) or (lq.cluster_queue if lq else None)
    cq = cluster_queues.get(cq_name or "")
    uses = {(u.flavor, u.resource): u for u in cq.resources} if cq else {}
    waiting = _waiting_on(conditions)
    blockers = _blockers(waiting.message or "", uses) if waiting else ()
    priority = spec.get("priority")
    return PendingWorkload(
        namespace=namespace,
        name=_name(obj),
        local_queue=queue,
        cluster_queue=cq_name,
        priority_class=_str(coerce.mapping(spec.get("priorityClassRef")).get("name")),
        priority=priority if isinstance(priority, int) and not isinstance(priority, bool) else None,
        owner=_owner(meta),
        created=_str(meta.get("creationTimestamp")),
        conditions=tuple(conditions[k] for k in WAIT_CONDITIONS if k in conditions),
        waiting_on=waiting,
        blockers=blockers,
        reasons=_reasons(conditions, waiting, blockers),
    )


def queue_status(
    cluster_queues: Iterable[Mapping[str, Any]],
    local_queues: Iterable[Mapping[str, Any]],
    workloads: Iterable[Mapping[str, Any]],
    metrics: Sequence[PendingMetric] | None = None,
) -> QueueStatus:
    """Every queue by name and every pending workload by queue, priority (highest first), age."""
    cqs = sorted((cluster_queue(o) for o in cluster_queues), key=lambda q: q.name)
    lqs = sorted((local_queue(o) for o in local_queues), key=lambda q: (q.namespace, q.name))
    by_cq = {q.name: q for q in cqs}
    by_lq = {(q.namespace, q.name): q for q in lqs}
    found = (pending_workload(o, by_cq, by_lq) for o in workloads)
    pending = sorted(
        (w for w in found if w is not None),
        key=lambda w: (w.cluster_queue or "", -(w.priority or 0), w.created or "", w.namespace, w.name),
    )
    return QueueStatus(tuple(cqs), tuple(lqs), tuple(pending), None if metrics is None else tuple(metrics))
