# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Kueue objects (kueue.x-k8s.io/v1beta2, the storage version of Kueue v0.17): one ResourceFlavor
per pool, one ClusterQueue per team in the cohort, one LocalQueue per team namespace, the
WorkloadPriorityClasses, and a Topology for each set of levels that a pool's flavor names
(topology.py)."""

from __future__ import annotations

from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import PREFIX
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.common import (
    GPU_RESOURCE,
    NAMESPACE_NAME_LABEL,
    metadata,
    obj,
    team_labels,
    toleration,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import (
    Pool,
    Resources,
    Site,
    Team,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.serving import is_inference_pool
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.topology import topology_name

API_VERSION = "kueue.x-k8s.io/v1beta2"
# The order of coveredResources, and of each flavor's resources (Kueue requires the same order).
COVERED_RESOURCES = ("cpu", "memory", GPU_RESOURCE)
_FIELD = {"cpu": "cpu", "memory": "memory", GPU_RESOURCE: "gpus"}
POOL_LABEL = f"{PREFIX}pool"
PRIORITY_LABEL = f"{PREFIX}priority-class"


def kueue_objects(site: Site) -> list[dict[str, Any]]:
    """Priority classes, topologies, flavors, cluster queues, then local queues, each group by name."""
    return [
        *(priority_class(c.name, c.value, c.description) for c in site.priority_classes),
        *(topology(levels) for levels in sorted({p.topology for p in site.pools if p.topology})),
        *(resource_flavor(p) for p in site.pools),
        *(cluster_queue(site, t) for t in site.teams),
        *(local_queue(t) for t in site.teams),
    ]


def priority_class(name: str, value: int, description: str) -> dict[str, Any]:
    return obj(API_VERSION, "WorkloadPriorityClass", metadata(name), value=value, description=description)


def topology(levels: tuple[str, ...]) -> dict[str, Any]:
    """A Kueue Topology: node label keys, coarsest first, ending at kubernetes.io/hostname."""
    spec = {"levels": [{"nodeLabel": level} for level in levels]}
    return obj(API_VERSION, "Topology", metadata(topology_name(levels)), spec=spec)


def resource_flavor(pool: Pool) -> dict[str, Any]:
    """The pool's nodes (gpurack.io/pool) and tolerations of its taints, injected into admitted pods;
    for a pool with a topology, its Topology (Kueue then places each pod set within its levels).

    Only the pool's own taints are tolerated: never gpurack.io/validating, so a node that has not
    passed validation gets no admitted workload.
    """
    spec: dict[str, Any] = {"nodeLabels": {POOL_LABEL: pool.name}}
    if pool.taints:
        spec["tolerations"] = [toleration(t) for t in pool.taints]
    if pool.topology:
        spec["topologyName"] = topology_name(pool.topology)
    return obj(API_VERSION, "ResourceFlavor", metadata(pool.name), spec=spec)


def cluster_queue(site: Site, team: Team) -> dict[str, Any]:
    """The team's queue in the cohort: a flavor per pool of its quota; reclaim lent quota from any
    borrower, and let higher priority preempt lower within the queue."""
    flavors = [_flavor_quotas(team, pool, is_inference_pool(site, pool)) for pool in sorted(team.quota)]
    spec = {
        "cohortName": site.cohort,
        "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: team.name}},
        "queueingStrategy": "BestEffortFIFO",
        "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
        "resourceGroups": [{"coveredResources": list(COVERED_RESOURCES), "flavors": flavors}],
    }
    return obj(API_VERSION, "ClusterQueue", metadata(team.name, **_team_labels(team)), spec=spec)


def _flavor_quotas(team: Team, pool: str, inference: bool) -> dict[str, Any]:
    """An inference pool's quota is never lent (lendingLimit 0): no other queue, training or
    batch, can borrow the capacity kept for serving."""
    resources = []
    for name in COVERED_RESOURCES:
        entry = {"name": name, "nominalQuota": _amount(team.quota[pool], name) or "0"}
        for key, limits in (("borrowingLimit", team.borrowing_limit), ("lendingLimit", team.lending_limit)):
            limit = limits.get(pool)
            amount = None if limit is None else _amount(limit, name)
            if amount is not None:
                entry[key] = amount
        if inference:
            entry["lendingLimit"] = "0"
        resources.append(entry)
    return {"name": pool, "resources": resources}


def _amount(resources: Resources, name: str) -> str | None:
    value = getattr(resources, _FIELD[name])
    return None if value is None else str(value)


def local_queue(team: Team) -> dict[str, Any]:
    meta = metadata(team.name, team.name, **_team_labels(team))
    return obj(API_VERSION, "LocalQueue", meta, spec={"clusterQueue": team.name})


def _team_labels(team: Team) -> dict[str, str]:
    labels = team_labels(team.name)
    if team.priority is not None:
        # Kueue has no per-queue default priority: jobs name theirs with kueue.x-k8s.io/priority-class.
        labels[PRIORITY_LABEL] = team.priority
    return labels
