"""`gpurack queue`: Kueue's queues, usage against quota and why each pending workload waits.

`fetch.fetch(kubeconfig)` reads the objects, `model.queue_status(...)` turns them into frozen
records, `pending_metrics(url)` adds Kueue's pending-workload gauge from Prometheus.
"""

from __future__ import annotations

from pathlib import Path

from gpurack import prometheus
from gpurack.quantity import human, parse_quantity
from gpurack.queue import fetch as fetch_module
from gpurack.queue.fetch import KueueObjects, fetch
from gpurack.queue.model import (
    Blocker,
    ClusterQueueView,
    Condition,
    LocalQueueView,
    PendingMetric,
    PendingWorkload,
    QueueStatus,
    ResourceUse,
    queue_status,
)

DEFAULT_KUBECONFIG = Path("~/.kube/gpurack-kubernetes.conf")
# Kueue's gauge (pkg/metrics/metrics.go), by ClusterQueue and status (active | inadmissible).
PENDING_QUERY = "sum by (cluster_queue, status) (kueue_pending_workloads)"


def pending_metrics(url: str) -> list[PendingMetric]:
    """Kueue's pending workloads per ClusterQueue and status, from Prometheus at `url`.

    Raises:
        UsageError: not an http(s) URL.
        NotAssessedError: Prometheus cannot be reached or refuses the query.
    """
    samples = prometheus.query(url, PENDING_QUERY)
    found = (
        PendingMetric(s.labels.get("cluster_queue", ""), s.labels.get("status", ""), s.value) for s in samples
    )
    return sorted(found, key=lambda m: (m.cluster_queue, m.status))


def load(kubeconfig: Path, prometheus_url: str | None = None) -> QueueStatus:
    """The queue status of the cluster of `kubeconfig`, with Prometheus's gauge when a URL is given."""
    # Looked up at call time, so tests can stand in a fake cluster for `queue.fetch`.
    objects = fetch(kubeconfig)
    metrics = pending_metrics(prometheus_url) if prometheus_url else None
    return queue_status(objects.cluster_queues, objects.local_queues, objects.workloads, metrics)


__all__ = [
    "DEFAULT_KUBECONFIG",
    "PENDING_QUERY",
    "Blocker",
    "ClusterQueueView",
    "Condition",
    "KueueObjects",
    "LocalQueueView",
    "PendingMetric",
    "PendingWorkload",
    "QueueStatus",
    "ResourceUse",
    "fetch",
    "fetch_module",
    "human",
    "load",
    "parse_quantity",
    "pending_metrics",
    "queue_status",
]
