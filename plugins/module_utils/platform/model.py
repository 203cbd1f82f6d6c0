# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The site's frozen records (Site, Pool, Team, ...) and their plain-dict shape (to_dict)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import quantity
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.quantity import Quantity

DEFAULT_COHORT = "site"
# The namespaces of the observability and gpu_operator sections (the roles' variables of these names).
DEFAULT_OBSERVABILITY_NAMESPACE = "gpurack-observability"
DEFAULT_GPU_OPERATOR_NAMESPACE = "gpu-operator"
# prometheus-adapter's upstream image (gpurack_metrics_adapter_image: a mirror's, or the lab's).
DEFAULT_METRICS_ADAPTER_IMAGE = "registry.k8s.io/prometheus-adapter/prometheus-adapter:v0.12.0"
# The DRA driver whose devices a dra pool's DeviceClass selects (gpurack_dra_driver): NVIDIA's
# GPU driver on a real site (docs/dra.md).
DEFAULT_DRA_DRIVER = "gpu.nvidia.com"
# Where the kueue role installs Kueue's controller (its release manifest names it).
KUEUE_NAMESPACE = "kueue-system"
# Kubernetes' own namespaces.
KUBERNETES_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
DEFAULT_STORAGE = "1Ti"
DEFAULT_VOLUME_CLAIMS = 20
_DEFAULT_STORAGE = quantity.parse(DEFAULT_STORAGE)
# A container that names no requests or limits gets these (the team's LimitRange).
DEFAULT_CONTAINER_REQUEST = {"cpu": "100m", "memory": "128Mi"}
DEFAULT_CONTAINER_LIMIT = {"cpu": "1", "memory": "1Gi"}


class PlatformInputError(ValueError):
    """The inventory's pools, teams or platform settings are wrong; the message says each problem."""


@dataclass(frozen=True)
class Resources:
    """An amount per resource; None where a limit is not set."""

    gpus: int | None = None
    cpu: Quantity | None = None
    memory: Quantity | None = None

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if self.gpus is not None:
            found["gpus"] = self.gpus
        for key, value in (("cpu", self.cpu), ("memory", self.memory)):
            if value is not None:
                found[key] = str(value)
        return found


@dataclass(frozen=True)
class InferenceService:
    """A model server of a team on an inference pool (gpurack_teams[].inference[])."""

    name: str
    pool: str
    model: str  # s3://<team>/<key>
    runtime: str
    image: str
    min_replicas: int
    max_replicas: int
    scale_metric: str
    scale_target: int
    latency_p99_ms: int
    startup_timeout_s: int
    resources: Resources  # per replica
    args: tuple[str, ...] = ()  # the runtime's own flags, after those gpurack sets
    # How long the HPA waits, after the metric fell, before it removes replicas (Kubernetes' 300).
    scale_down_s: int = 300

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "pool": self.pool,
            "model": self.model,
            "runtime": self.runtime,
            "image": self.image,
            "replicas": {"min": self.min_replicas, "max": self.max_replicas},
            "scale": {"metric": self.scale_metric, "target": self.scale_target, "down_s": self.scale_down_s},
            "latency_p99_ms": self.latency_p99_ms,
            "startup_timeout_s": self.startup_timeout_s,
            "resources": self.resources.to_dict(),
            "args": list(self.args),
        }


@dataclass(frozen=True)
class Team:
    """One team: its namespace, queues and role carry its name. `quota` is complete for each pool."""

    name: str
    groups: tuple[str, ...]
    quota: Mapping[str, Resources]
    borrowing_limit: Mapping[str, Resources] = field(default_factory=dict)
    lending_limit: Mapping[str, Resources] = field(default_factory=dict)
    priority: str | None = None
    pod_security: str = "restricted"
    storage: Quantity = _DEFAULT_STORAGE
    volume_claims: int = DEFAULT_VOLUME_CLAIMS
    # The LimitRange's default request and limit per container: {cpu, memory} each.
    container_request: Mapping[str, Quantity] = field(
        default_factory=lambda: {k: quantity.parse(v) for k, v in DEFAULT_CONTAINER_REQUEST.items()}
    )
    container_limit: Mapping[str, Quantity] = field(
        default_factory=lambda: {k: quantity.parse(v) for k, v in DEFAULT_CONTAINER_LIMIT.items()}
    )
    inference: tuple[InferenceService, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "groups": list(self.groups)}
        for key in ("quota", "borrowing_limit", "lending_limit"):
            limits: Mapping[str, Resources] = getattr(self, key)
            data[key] = {pool: r.to_dict() for pool, r in limits.items()}
        if self.priority is not None:
            data["priority"] = self.priority
        data.update(pod_security=self.pod_security, storage=str(self.storage))
        data["volume_claims"] = self.volume_claims
        data["container_defaults"] = {
            "request": {k: str(v) for k, v in self.container_request.items()},
            "limit": {k: str(v) for k, v in self.container_limit.items()},
        }
        if self.inference:
            data["inference"] = [service.to_dict() for service in self.inference]
        return data


@dataclass(frozen=True)
class ModelCacheConfig:
    """Where a pool's nodes keep the models their servers load, and the most bytes each node's
    cache of one team may hold (gpurack_pool.model_cache)."""

    path: str
    size_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size_bytes}


@dataclass(frozen=True)
class Pool:
    """A pool and its GPU capacity: from facts when every host has them, else from expectations."""

    name: str
    hosts: tuple[str, ...]
    taints: tuple[Mapping[str, str], ...]
    sharing: str
    workload: str
    gpus: int
    gpus_source: str  # facts | expect
    model_cache: ModelCacheConfig | None = None  # inference pools only
    # Kueue Topology levels of its flavor, coarsest first, ending at the hostname; () for none.
    topology: tuple[str, ...] = ()
    # device-plugin (nvidia.com/gpu) or dra (a DeviceClass and ResourceClaimTemplates; dra.py)
    allocation: str = "device-plugin"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "hosts": list(self.hosts),
            "taints": [dict(t) for t in self.taints],
            "sharing": self.sharing,
            "workload": self.workload,
            "gpus": self.gpus,
            "gpus_source": self.gpus_source,
            "model_cache": self.model_cache.to_dict() if self.model_cache else None,
            "topology": list(self.topology),
            "allocation": self.allocation,
        }


@dataclass(frozen=True)
class PriorityClass:
    """A Kueue WorkloadPriorityClass."""

    name: str
    value: int
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "description": self.description}


# Serving first, then training, then what can wait (gpurack_priority_classes replaces them).
DEFAULT_PRIORITY_CLASSES = (
    PriorityClass("inference", 10000, "Serving: admitted first, preempts training and batch in its queue"),
    PriorityClass("training", 1000, "Training jobs"),
    PriorityClass("batch", 100, "Batch work that can wait and be preempted"),
)


@dataclass(frozen=True)
class ObjectStore:
    """Where team pods may open connections besides their own namespace and DNS: networks
    (`cidrs`), or the pods of a namespace in the cluster (`namespace`, `pod_labels`); only the
    pods of `teams` when given (None: every team)."""

    cidrs: tuple[str, ...]
    port: int
    namespace: str | None = None
    pod_labels: tuple[tuple[str, str], ...] = ()
    teams: tuple[str, ...] | None = None

    def allows(self, team: str) -> bool:
        return self.teams is None or team in self.teams

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cidrs": list(self.cidrs), "port": self.port}
        if self.namespace is not None:
            out["namespace"] = self.namespace
            out["pod_labels"] = dict(self.pod_labels)
        if self.teams is not None:
            out["teams"] = list(self.teams)
        return out


@dataclass(frozen=True)
class Site:
    """Everything the platform objects are built from."""

    teams: tuple[Team, ...]
    cohort: str
    pools: tuple[Pool, ...]
    overcommit: bool = False
    object_store: ObjectStore | None = None
    priority_classes: tuple[PriorityClass, ...] = DEFAULT_PRIORITY_CLASSES
    observability_namespace: str = DEFAULT_OBSERVABILITY_NAMESPACE
    gpu_operator_namespace: str = DEFAULT_GPU_OPERATOR_NAMESPACE
    # Where the cluster's pods reach Prometheus: prometheus-adapter reads the inference services'
    # metrics there ("" when unknown; refused while a team serves).
    prometheus_url: str = ""
    metrics_adapter_image: str = DEFAULT_METRICS_ADAPTER_IMAGE
    dra_driver: str = DEFAULT_DRA_DRIVER

    def pool(self, name: str) -> Pool:
        return next(p for p in self.pools if p.name == name)

    @property
    def platform_namespaces(self) -> frozenset[str]:
        """Every namespace the platform renders into or installs into (no team may take one)."""
        store = self.object_store
        return platform_namespaces(self.observability_namespace, self.gpu_operator_namespace, store)

    def to_dict(self) -> dict[str, Any]:
        return {
            "teams": [t.to_dict() for t in self.teams],
            "cohort": self.cohort,
            "pools": [p.to_dict() for p in self.pools],
            "overcommit": self.overcommit,
            "object_store": None if self.object_store is None else self.object_store.to_dict(),
            "priority_classes": [c.to_dict() for c in self.priority_classes],
            "observability_namespace": self.observability_namespace,
            "gpu_operator_namespace": self.gpu_operator_namespace,
            "prometheus_url": self.prometheus_url,
            "metrics_adapter_image": self.metrics_adapter_image,
            "dra_driver": self.dra_driver,
        }


def platform_namespaces(
    observability_namespace: str, gpu_operator_namespace: str, object_store: ObjectStore | None
) -> frozenset[str]:
    """Kubernetes' own namespaces, Kueue's, observability's, the GPU Operator's and an in-cluster
    object store's: the renderers put objects there, so a team namespace of that name would get
    the team's RBAC, quota and default-deny policies on top of the platform's own pods."""
    store = (object_store.namespace,) if object_store is not None and object_store.namespace else ()
    return frozenset(
        (*KUBERNETES_NAMESPACES, KUEUE_NAMESPACE, observability_namespace, gpu_operator_namespace, *store)
    )
