"""Kueue v1beta2 objects as the API returns them (CustomObjectsApi dicts), for `gpurack queue` tests.

Written after sigs.k8s.io/kueue v0.17.0 apis/kueue/v1beta2 (clusterqueue_types.go,
localqueue_types.go, workload_types.go) and the messages of
pkg/scheduler/flavorassigner/flavorassigner.go: two teams in cohort `site`, the lab's pools
as flavors; alpha has one job running on its only H200 and one waiting for a second.
"""

from __future__ import annotations

from typing import Any

API = "kueue.x-k8s.io/v1beta2"
UNUSED_GPU = (
    "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "
    "flavor lab-h200x1, 1 more needed"
)
OVER_CAPACITY = (
    "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor "
    "lab-hgx-h100x8-ib, previously considered podsets requests (0) + current podset request (16) > "
    "maximum capacity (12)"
)
TWO_RESOURCES = (
    "couldn't assign flavors to pod set launcher: insufficient unused quota for cpu in flavor "
    "lab-hgx-h100x8-ib, 500m more needed; couldn't assign flavors to pod set worker: insufficient unused "
    "quota for memory in flavor lab-hgx-h100x8-ib, 32Gi more needed, insufficient unused quota for "
    "nvidia.com/gpu in flavor lab-hgx-h100x8-ib, 2 more needed"
)
PREEMPTED = (
    "Preempted to accommodate a workload (UID: 5b0e, JobUID: 9d2c) due to reclamation within the cohort"
)


def _condition(kind: str, status: str, reason: str, message: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": "2026-12-01T18:00:00Z",
        "observedGeneration": 1,
    }


def _flavor(name: str, gpus: str, cpu: str, memory: str, borrowing: str | None = None) -> dict[str, Any]:
    gpu: dict[str, Any] = {"name": "nvidia.com/gpu", "nominalQuota": gpus}
    if borrowing is not None:
        gpu["borrowingLimit"] = borrowing
        gpu["lendingLimit"] = "0"
    return {
        "name": name,
        "resources": [gpu, {"name": "cpu", "nominalQuota": cpu}, {"name": "memory", "nominalQuota": memory}],
    }


def _usage(flavor: str, gpus: str, cpu: str, memory: str, borrowed_gpus: str = "0") -> dict[str, Any]:
    return {
        "name": flavor,
        "resources": [
            {"name": "cpu", "total": cpu, "borrowed": "0"},
            {"name": "memory", "total": memory, "borrowed": "0"},
            {"name": "nvidia.com/gpu", "total": gpus, "borrowed": borrowed_gpus},
        ],
    }


def cluster_queue(
    name: str, flavors: list[dict[str, Any]], usage: list[dict[str, Any]], pending: int
) -> dict[str, Any]:
    admitted = 1 if usage else 0
    return {
        "apiVersion": API,
        "kind": "ClusterQueue",
        "metadata": {"name": name, "uid": f"cq-{name}", "generation": 1},
        "spec": {
            "cohortName": "site",
            "namespaceSelector": {},
            "queueingStrategy": "BestEffortFIFO",
            "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
            "resourceGroups": [{"coveredResources": ["nvidia.com/gpu", "cpu", "memory"], "flavors": flavors}],
        },
        "status": {
            "conditions": [_condition("Active", "True", "Ready", "Can admit new workloads")],
            "flavorsReservation": usage,
            "flavorsUsage": usage,
            "pendingWorkloads": pending,
            "reservingWorkloads": admitted,
            "admittedWorkloads": admitted,
        },
    }


def cluster_queues() -> list[dict[str, Any]]:
    """alpha: its H200 in use (1 of 1) and 4 H100 with 4 more to borrow; beta: idle, 8 H100."""
    alpha = cluster_queue(
        "alpha",
        [_flavor("lab-h200x1", "1", "8", "64Gi"), _flavor("lab-hgx-h100x8-ib", "4", "32", "256Gi", "4")],
        [_usage("lab-h200x1", "1", "2", "16Gi")],
        pending=3,
    )
    beta = cluster_queue("beta", [_flavor("lab-hgx-h100x8-ib", "8", "64", "512Gi", "4")], [], pending=2)
    return [alpha, beta]


def local_queue(namespace: str, cluster: str, pending: int, admitted: int) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "LocalQueue",
        "metadata": {"name": namespace, "namespace": namespace},
        "spec": {"clusterQueue": cluster},
        "status": {
            "conditions": [_condition("Active", "True", "Ready", "Can submit new workloads to localQueue")],
            "pendingWorkloads": pending,
            "reservingWorkloads": admitted,
            "admittedWorkloads": admitted,
        },
    }


def local_queues() -> list[dict[str, Any]]:
    return [local_queue("alpha", "alpha", 3, 1), local_queue("beta", "beta", 2, 0)]


def workload(
    namespace: str,
    job: str,
    conditions: list[dict[str, Any]],
    *,
    priority: int = 100,
    created: str = "2026-12-01T18:00:00Z",
    queue: str | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "Workload",
        "metadata": {
            "name": f"job-{job}-3f2a1",
            "namespace": namespace,
            "creationTimestamp": created,
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job, "uid": f"uid-{job}"}],
        },
        "spec": {
            "active": True,
            "queueName": queue or namespace,
            "priority": priority,
            "priorityClassRef": {
                "group": "kueue.x-k8s.io",
                "kind": "WorkloadPriorityClass",
                "name": "training",
            },
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "train",
                                    "resources": {"requests": {"nvidia.com/gpu": "1", "cpu": "2"}},
                                }
                            ]
                        }
                    },
                }
            ],
        },
        "status": {"conditions": conditions},
    }


def admitted(namespace: str, job: str) -> dict[str, Any]:
    wl = workload(
        namespace,
        job,
        [
            _condition(
                "QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {namespace}"
            ),
            _condition("Admitted", "True", "Admitted", "The workload is admitted"),
        ],
    )
    wl["status"]["admission"] = {
        "clusterQueue": namespace,
        "podSetAssignments": [
            {"name": "main", "flavors": {"nvidia.com/gpu": "lab-h200x1", "cpu": "lab-h200x1"}, "count": 1}
        ],
    }
    return wl


def waiting(
    namespace: str, job: str, message: str, priority: int = 100, created: str = "2026-12-01T18:01:00Z"
) -> dict[str, Any]:
    condition = _condition("QuotaReserved", "False", "Pending", message)
    return workload(namespace, job, [condition], priority=priority, created=created)


def preempted(namespace: str, job: str) -> dict[str, Any]:
    """Evicted by a reclaim in the cohort and back in its queue, not yet reconsidered."""
    return workload(
        namespace,
        job,
        [
            _condition("QuotaReserved", "False", "Preempted", PREEMPTED),
            _condition("Admitted", "False", "NoReservation", "The workload has no reservation"),
            _condition("Evicted", "True", "Preempted", PREEMPTED),
            _condition("Preempted", "True", "InCohortReclamation", PREEMPTED),
            _condition("Requeued", "True", "Preempted", PREEMPTED),
        ],
        priority=10,
    )


def finished(namespace: str, job: str) -> dict[str, Any]:
    return workload(
        namespace,
        job,
        [
            _condition("QuotaReserved", "False", "Pending", "previously reserved"),
            _condition("Finished", "True", "Succeeded", "Job finished successfully"),
        ],
    )


def workloads() -> list[dict[str, Any]]:
    """alpha: admitted, waiting for a GPU, over capacity, new; beta: preempted, two pod sets."""
    return [
        admitted("alpha", "train-1"),
        waiting("alpha", "train-2", UNUSED_GPU, priority=100, created="2026-12-01T18:02:00Z"),
        waiting("alpha", "big", OVER_CAPACITY, priority=1000, created="2026-12-01T18:03:00Z"),
        workload("alpha", "fresh", [], priority=100, created="2026-12-01T18:04:00Z"),
        preempted("beta", "low"),
        waiting("beta", "mpi", TWO_RESOURCES, priority=100),
        finished("beta", "done"),
    ]
