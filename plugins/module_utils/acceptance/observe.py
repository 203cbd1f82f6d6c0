# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""From what the acceptance role read in the cluster to `Observed`, what one run saw.

The role gathers plain API objects (the Workload, its Events, the Job, its pods and their
nodes) and the rank-0 pods' logs; this reads the figures out of them:

- queue wait: the Workload's creation to its `Admitted` condition (the API's times are
  whole seconds); the reason it waited: the message of Kueue's last `Pending` event;
- the pool: the flavor Kueue assigned to the GPU resource (one ResourceFlavor per pool);
- steps at deletion: the last step the first rank-0 pod logged (it stops at the next
  collective once its peer is gone); restore: the deletion to the first step logged after
  the resume (each trainer event carries its Unix time `t`);
- failure: why the role's run stopped short, if it did, then the Job's `Failed` condition with
  the failed containers' reasons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance import trainer_log
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.job import INDEX_LABEL

GPU_RESOURCES = ("nvidia.com/gpu",)


def api_time(text: Any) -> datetime | None:
    """An API object's time (RFC 3339, `Z` for UTC), or the role's own UTC time; None when missing."""
    if not isinstance(text, str) or not text:
        return None
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    # The API's times are UTC; so is the role's `now(utc=true)`, which names no zone.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    for item in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(item, Mapping) and item.get("type") == kind:
            return item
    return None


def true_condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    """The object's condition of `kind` when its status is True."""
    found = _condition(obj, kind)
    return found if found is not None and found.get("status") == "True" else None


def pending_reason(workload: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> str:
    """Why Kueue kept the workload waiting: its QuotaReserved condition's message while it is
    not admitted, else the newest `Pending` event's."""
    reserved = _condition(workload, "QuotaReserved")
    if reserved is not None and reserved.get("status") == "False" and reserved.get("message"):
        return str(reserved["message"])
    pending = [e for e in events if e.get("reason") == "Pending" and e.get("message")]
    pending.sort(key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
    return str(pending[-1]["message"]) if pending else ""


def assigned_pool(workload: Mapping[str, Any]) -> str:
    """The flavor Kueue assigned to the GPUs of the first pod set (its pool), else any flavor."""
    assignments = ((workload.get("status") or {}).get("admission") or {}).get("podSetAssignments") or []
    for assignment in assignments:
        flavors = assignment.get("flavors") or {}
        for resource in (*GPU_RESOURCES, *sorted(flavors)):
            if flavors.get(resource):
                return str(flavors[resource])
    return ""


def _rank0_pods(pods: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    mine = [p for p in pods if ((p.get("metadata") or {}).get("labels") or {}).get(INDEX_LABEL) == "0"]
    return sorted(mine, key=lambda p: str((p.get("metadata") or {}).get("creationTimestamp") or ""))


def _failure(job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> str:
    failed = true_condition(job, "Failed")
    if failed is None:
        return ""
    reasons = []
    for pod in pods:
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            ended = ((status.get("state") or {}).get("terminated")) or {}
            if ended and ended.get("exitCode") not in (0, None):
                name = (pod.get("metadata") or {}).get("name")
                reasons.append(f"{name} exited {ended.get('exitCode')} ({ended.get('reason') or 'Error'})")
    head = f"{failed.get('reason') or 'Failed'}: {failed.get('message') or ''}".strip(": ")
    return "; ".join([head, *sorted(set(reasons))[:3]])


def _restore_s(deleted_at: datetime | None, report: trainer_log.TrainerReport) -> float | None:
    if deleted_at is None or len(report.attempts) < 2:
        return None
    for attempt in report.attempts[1:]:
        times = [float(e["t"]) for e in attempt.steps if isinstance(e.get("t"), (int, float))]
        if times:
            return round(min(times) - deleted_at.timestamp(), 3)
    return None


def _nodes_used(pods: Sequence[Mapping[str, Any]], nodes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The labels of each node a pod of the run was scheduled on, by node name."""
    used = {str((p.get("spec") or {}).get("nodeName")) for p in pods if (p.get("spec") or {}).get("nodeName")}
    return {
        str(n["metadata"]["name"]): dict(n["metadata"].get("labels") or {})
        for n in nodes
        if n["metadata"]["name"] in used
    }


def observed(raw: Mapping[str, Any]) -> dict[str, Any]:
    """`Observed`'s mapping from the role's raw read of the cluster."""
    workload = raw.get("workload") or {}
    job = raw.get("job") or {}
    pods = list(raw.get("pods") or [])
    logs = raw.get("logs") or {}
    rank0 = _rank0_pods(pods)
    lines = [line for pod in rank0 for line in str(logs.get(pod["metadata"]["name"], "")).splitlines()]
    report = trainer_log.read(lines)
    first = trainer_log.read(str(logs.get(rank0[0]["metadata"]["name"], "")).splitlines()) if rank0 else None
    admitted = true_condition(workload, "Admitted")
    created = api_time((workload.get("metadata") or {}).get("creationTimestamp"))
    admitted_at = api_time(admitted.get("lastTransitionTime")) if admitted else None
    deleted = raw.get("deleted") or {}
    deleted_at = api_time(deleted.get("at"))
    finished = api_time(job.get("status", {}).get("completionTime")) or api_time(raw.get("finished"))
    started = admitted_at or api_time(raw.get("submitted")) or finished or datetime.now(UTC)
    nodes = _nodes_used(pods, raw.get("nodes") or [])
    pool = assigned_pool(workload) or str(raw.get("pool") or "")
    prices = raw.get("prices") or {}
    return {
        "team": raw.get("team"),
        "queue": raw.get("queue"),
        "pool": pool,
        "pods": raw.get("pods_wanted") or 1,
        "gpus_per_pod": raw.get("gpus_per_pod") or 0,
        "started": started.isoformat(),
        "finished": (finished or admitted_at or datetime.now(UTC)).isoformat(),
        "admitted": admitted is not None,
        "queue_wait_s": (admitted_at - created).total_seconds() if admitted_at and created else None,
        "queue_reason": pending_reason(workload, list(raw.get("events") or [])),
        "trainer_log": lines,
        "deleted_at_step": first.attempts[0].last_step if first and first.attempts and deleted_at else None,
        "restore_s": _restore_s(deleted_at, report),
        "nodes": nodes,
        "storage": dict(raw.get("storage") or {}),
        "gpu_hour": (prices.get("gpu_hour") or {}).get(pool),
        "monthly": dict(prices.get("monthly") or {}),
        "currency": prices.get("currency") or "",
        "job_failed": true_condition(job, "Failed") is not None,
        # Why the role's run stopped short (a wait that ran out, a log it could not read), then
        # why the Job failed.
        "failure": "; ".join(filter(None, (str(raw.get("failure") or ""), _failure(job, pods)))),
    }


@dataclass(frozen=True)
class Observed:
    """What one acceptance run saw. Times are timezone-aware; figures in seconds."""

    team: str
    queue: str
    pool: str
    pods: int
    gpus_per_pod: int
    started: datetime
    finished: datetime
    admitted: bool
    queue_wait_s: float | None
    queue_reason: str
    trainer: trainer_log.TrainerReport
    deleted_at_step: int | None = None  # the last step seen before the pod was deleted
    restore_s: float | None = None  # pod deleted -> the trainer training again
    nodes: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    storage: Mapping[str, str] = field(default_factory=dict)  # endpoint, bucket
    gpu_hour: float | None = None  # the pool's price
    monthly: Mapping[str, float] = field(default_factory=dict)
    currency: str = ""
    job_failed: bool = False
    failure: str = ""

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Observed:
        """Read the role's mapping (times as ISO 8601 text, the trainer's log as lines).

        Raises:
            ValueError: a required key is missing or a time is not ISO 8601.
        """
        missing = [k for k in ("team", "queue", "started", "finished") if not data.get(k)]
        if missing:
            raise ValueError(f"acceptance observations lack {', '.join(missing)}")

        def number(key: str) -> float | None:
            value = data.get(key)
            return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

        at_step = data.get("deleted_at_step")
        return cls(
            team=str(data["team"]),
            queue=str(data["queue"]),
            pool=str(data.get("pool") or ""),
            pods=int(data.get("pods") or 1),
            gpus_per_pod=int(data.get("gpus_per_pod") or 0),
            started=datetime.fromisoformat(str(data["started"])),
            finished=datetime.fromisoformat(str(data["finished"])),
            admitted=bool(data.get("admitted")),
            queue_wait_s=number("queue_wait_s"),
            queue_reason=str(data.get("queue_reason") or ""),
            trainer=trainer_log.read(str(line) for line in data.get("trainer_log") or ()),
            deleted_at_step=int(at_step) if isinstance(at_step, int) else None,
            restore_s=number("restore_s"),
            nodes={
                str(n): {str(k): str(v) for k, v in (labels or {}).items()}
                for n, labels in (data.get("nodes") or {}).items()
            },
            storage={str(k): str(v) for k, v in (data.get("storage") or {}).items()},
            gpu_hour=number("gpu_hour"),
            monthly={str(k): float(v) for k, v in (data.get("monthly") or {}).items()},
            currency=str(data.get("currency") or ""),
            job_failed=bool(data.get("job_failed")),
            failure=str(data.get("failure") or ""),
        )
