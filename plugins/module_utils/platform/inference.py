# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Each inference service's objects in its team's namespace: a Deployment on its pool's nodes
under the inference PriorityClass, a Service, a PodDisruptionBudget and an HPA on the runtime's
own metric; per team and pool, the model cache's volume and claim; per serving team, the
NetworkPolicy that lets clients in; plus the PriorityClass itself (docs/platform.md, "Inference
services"); and prometheus-adapter, which serves the HPAs their metric (metrics_adapter.py)."""

from __future__ import annotations

import hashlib
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import PREFIX
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.common import (
    GPU_RESOURCE,
    metadata,
    obj,
    team_labels,
    toleration,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.metrics_adapter import (
    metrics_adapter_objects,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import (
    InferenceService,
    ModelCacheConfig,
    Pool,
    Site,
    Team,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.serving import (
    pods_at_most,
    runtime_of,
    scale_metric_name,
)

SERVICE_LABEL = f"{PREFIX}inference-service"
POOL_LABEL = f"{PREFIX}pool"
# Above every training and batch pod (which run at priority 0 unless they name a class): the
# scheduler never preempts a serving pod for them, and a serving pod may preempt them.
PRIORITY_CLASS = "gpurack-inference"
PRIORITY_VALUE = 1_000_000
# The node-local model cache in the pod: the team's folder of the pool's cache on the node.
CACHE_PATH = "/var/cache/gpurack-models"
CACHE_VOLUME = "gpurack-model-cache"
# Kubernetes enforces no size on a hostPath volume: the launcher enforces the cache's limit
# (GPURACK_MODEL_CACHE_LIMIT), and the claim asks for a token amount that never changes (a
# claim's request may not shrink).
CACHE_CLAIM_REQUEST = "1Mi"
STARTUP_PERIOD_S = 10
# The user the server runs as (the serving images gpurack builds have no root process).
SERVER_UID = 65532
PRESTOP_S = 10
# The serving image's preStop hook (workloads/serving/gpurack_serving/drain.py), on its PATH.
DRAIN_COMMAND = ("python", "-m", "gpurack_serving.drain")


def inference_objects(site: Site) -> list[dict[str, Any]]:
    """Only when a team serves: the PriorityClass, the quota on it in every team's namespace,
    prometheus-adapter, the cache volumes and claims by team and pool, the client policies, then
    each team's services, by team and name."""
    services = [(team, service) for team in site.teams for service in team.inference]
    if not services:
        return []
    objects = [priority_class(), *(priority_quota(team) for team in site.teams)]
    objects.extend(metrics_adapter_objects(site))
    for team_name, pool_name in sorted({(t.name, s.pool) for t, s in services}):
        objects.extend(model_cache_volume(site.pool(pool_name), team_name))
    objects.extend(serving_policy(t) for t in site.teams if t.inference)
    for team, service in services:
        objects.extend(
            [
                deployment(site, team, service),
                service_object(team, service),
                disruption_budget(team, service),
                autoscaler(team, service),
            ]
        )
    return objects


def priority_class() -> dict[str, Any]:
    return obj(
        "scheduling.k8s.io/v1",
        "PriorityClass",
        metadata(PRIORITY_CLASS),
        value=PRIORITY_VALUE,
        globalDefault=False,
        preemptionPolicy="PreemptLowerPriority",
        description="gpurack inference services: never preempted by training or batch pods",
    )


def priority_quota(team: Team) -> dict[str, Any]:
    """Only the team's own services may run at the inference priority: as many pods as they can
    have at once (0 in a namespace that serves nothing), so no job of any team preempts with it."""
    scope = {
        "matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": [PRIORITY_CLASS]}]
    }
    spec = {"hard": {"pods": str(sum(pods_at_most(s) for s in team.inference))}, "scopeSelector": scope}
    meta = metadata(PRIORITY_CLASS, team.name, **team_labels(team.name))
    return obj("v1", "ResourceQuota", meta, spec=spec)


def model_cache_dirs(site: Site) -> list[dict[str, Any]]:
    """The folder each node of a serving pool keeps a team's models in, by host: the node makes
    it (owned by the server's user; Kubernetes would make a missing hostPath folder root's)."""
    wanted = sorted({(t.name, s.pool) for t in site.teams for s in t.inference})
    dirs: list[dict[str, Any]] = []
    for team, name in wanted:
        pool = site.pool(name)
        cache = _cache_of(pool)
        dirs.extend(
            {"host": host, "root": cache.path, "path": f"{cache.path}/{team}", "uid": SERVER_UID}
            for host in pool.hosts
        )
    return sorted(dirs, key=lambda d: (d["host"], d["path"]))


def serving_target(site: Site, team_name: str, service_name: str) -> dict[str, Any]:
    """What `gpurack accept --inference` needs of one service: where it answers, how it scales,
    its objective, and the folder each node of its pool keeps the team's models in.

    Raises:
        ValueError: no such team, or no such service of it (the message lists what there is).
    """
    team = next((t for t in site.teams if t.name == team_name), None)
    if team is None:
        raise ValueError(f"no team {team_name!r}; teams: {', '.join(t.name for t in site.teams) or 'none'}")
    service = next((s for s in team.inference if s.name == service_name), None)
    if service is None:
        known = ", ".join(s.name for s in team.inference) or "none"
        raise ValueError(f"team {team_name} has no inference service {service_name!r}; its services: {known}")
    pool = site.pool(service.pool)
    selector = ",".join(f"{k}={v}" for k, v in _selector(service).items())
    return {
        **service.to_dict(),
        "team": team.name,
        "namespace": team.name,
        "url": f"http://{service.name}.{team.name}.svc",
        "selector": selector,
        "gpus_per_replica": service.resources.gpus,
        # the team's folder on this pool's nodes only: its caches on other pools are not this service's
        "cache": [
            {"host": d["host"], "path": d["path"]}
            for d in model_cache_dirs(site)
            if d["host"] in pool.hosts and d["path"] == f"{_cache_of(pool).path}/{team.name}"
        ],
        "hosts": list(pool.hosts),
    }


def _cache_of(pool: Pool) -> ModelCacheConfig:
    if pool.model_cache is None:  # serving_errors refuses a service on a pool that is not inference
        raise ValueError(f"pool {pool.name} keeps no model cache")
    return pool.model_cache


def _cache_names(pool: Pool, team: str) -> tuple[str, str]:
    """The PersistentVolume's and the claim's names; a new cache path makes new ones (a volume's
    source and a claim's volume cannot change)."""
    # Of team, pool and path together: team "ml" on pool "prod-a" and "ml-prod" on "a" differ.
    digest = hashlib.sha256(f"{team}\0{pool.name}\0{_cache_of(pool).path}".encode()).hexdigest()[:8]
    return f"{CACHE_VOLUME}-{team}-{pool.name}-{digest}", f"{CACHE_VOLUME}-{pool.name}-{digest}"


def model_cache_volume(pool: Pool, team: str) -> list[dict[str, Any]]:
    """A hostPath PersistentVolume on the team's folder of the pool's cache, bound to a claim in
    the team's namespace. Pod Security "restricted" allows no hostPath in a pod, but allows a
    claim: only the platform, which may make volumes, decides which host folder a team gets."""
    cache = _cache_of(pool)
    volume, claim = _cache_names(pool, team)
    labels = {**team_labels(team), POOL_LABEL: pool.name}
    selector = {"key": POOL_LABEL, "operator": "In", "values": [pool.name]}
    pv_spec = {
        "capacity": {"storage": str(cache.size_bytes)},
        "accessModes": ["ReadWriteMany"],
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": "",
        "hostPath": {"path": f"{cache.path}/{team}", "type": "Directory"},
        "claimRef": {"namespace": team, "name": claim},
        "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [selector]}]}},
    }
    pvc_spec = {
        "accessModes": ["ReadWriteMany"],
        "storageClassName": "",
        "volumeName": volume,
        "resources": {"requests": {"storage": CACHE_CLAIM_REQUEST}},
    }
    return [
        obj("v1", "PersistentVolume", metadata(volume, **labels), spec=pv_spec),
        obj("v1", "PersistentVolumeClaim", metadata(claim, team, **labels), spec=pvc_spec),
    ]


def _labels(team: Team, service: InferenceService) -> dict[str, str]:
    return {**team_labels(team.name), SERVICE_LABEL: service.name, "app.kubernetes.io/name": service.name}


def _selector(service: InferenceService) -> dict[str, str]:
    return {SERVICE_LABEL: service.name}


def deployment(site: Site, team: Team, service: InferenceService) -> dict[str, Any]:
    """Replicas are the HPA's (the manifest names none, so an apply never resets them); a rollout
    starts a new pod before it stops an old one, and a pod takes traffic only when ready."""
    pool = site.pool(service.pool)
    template = {
        "metadata": {"labels": _labels(team, service)},
        "spec": {
            "priorityClassName": PRIORITY_CLASS,
            "nodeSelector": {POOL_LABEL: pool.name},
            "tolerations": [toleration(t) for t in pool.taints],
            # Pod Security "restricted" in every team namespace; the model cache is the server's.
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": SERVER_UID,
                "runAsGroup": SERVER_UID,
                "fsGroup": SERVER_UID,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [_container(service, _cache_of(pool))],
            "volumes": [
                {
                    "name": "model-cache",
                    "persistentVolumeClaim": {"claimName": _cache_names(pool, team.name)[1]},
                },
                {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": runtime_of(service).shm_size}},
            ],
        },
    }
    spec = {
        "selector": {"matchLabels": _selector(service)},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        "template": template,
    }
    meta = metadata(service.name, team.name, **_labels(team, service))
    return obj("apps/v1", "Deployment", meta, spec=spec)


def _container(service: InferenceService, cache: ModelCacheConfig) -> dict[str, Any]:
    runtime = runtime_of(service)
    resources = service.resources
    amounts = {"cpu": str(resources.cpu), "memory": str(resources.memory)}
    if resources.gpus:
        amounts[GPU_RESOURCE] = str(resources.gpus)
    probe = {"httpGet": {"path": runtime.health_path, "port": "http"}}
    return {
        "name": "server",
        "image": service.image,
        "ports": [{"name": "http", "containerPort": runtime.port}],
        # The image's launcher reads these (workloads/serving: the cache, then the runtime).
        "args": list(service.args),
        "env": [
            {"name": "GPURACK_MODEL_URI", "value": service.model},
            {"name": "GPURACK_MODEL_CACHE", "value": CACHE_PATH},
            {"name": "GPURACK_MODEL_CACHE_LIMIT", "value": str(cache.size_bytes)},
            {"name": "GPURACK_SERVED_NAME", "value": service.name},
            {"name": "GPURACK_PORT", "value": str(runtime.port)},
        ],
        "envFrom": [{"secretRef": {"name": "gpurack-object-store", "optional": True}}],
        "resources": {"requests": dict(amounts), "limits": dict(amounts)},
        # Ready only once the model is loaded; the startup probe waits for a slow first load.
        "startupProbe": {
            **probe,
            "periodSeconds": STARTUP_PERIOD_S,
            "failureThreshold": max(1, -(-service.startup_timeout_s // STARTUP_PERIOD_S)),
        },
        "readinessProbe": {**probe, "periodSeconds": 5, "failureThreshold": 2},
        # A pod told to stop keeps serving while the endpoints controller and every node's
        # kube-proxy stop sending it requests (they learn of it at the same moment as the
        # kubelet): without the wait, a rollout or a scale-down fails the requests in between.
        # The image's drain hook waits too, and meanwhile closes each kept-alive connection after
        # its answer, so active clients move to the pods that stay before the SIGTERM.
        "lifecycle": {"preStop": {"exec": {"command": [*DRAIN_COMMAND, str(PRESTOP_S)]}}},
        "livenessProbe": {**probe, "periodSeconds": 20, "failureThreshold": 3},
        "volumeMounts": [
            {"name": "model-cache", "mountPath": CACHE_PATH},
            {"name": "shm", "mountPath": "/dev/shm"},
        ],
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
    }


def serving_policy(team: Team) -> dict[str, Any]:
    """The team's namespace denies all ingress (tenancy); its model servers take requests on
    their http port from anywhere: other teams' applications, gateways, and Prometheus on its
    host. Nothing else of the namespace opens."""
    ports = sorted({runtime_of(s).port for s in team.inference})
    spec = {
        "podSelector": {"matchExpressions": [{"key": SERVICE_LABEL, "operator": "Exists"}]},
        "policyTypes": ["Ingress"],
        "ingress": [{"ports": [{"protocol": "TCP", "port": port} for port in ports]}],
    }
    meta = metadata("allow-inference-clients", team.name, **team_labels(team.name))
    return obj("networking.k8s.io/v1", "NetworkPolicy", meta, spec=spec)


def service_object(team: Team, service: InferenceService) -> dict[str, Any]:
    spec = {
        "selector": _selector(service),
        "ports": [{"name": "http", "port": 80, "targetPort": "http"}],
    }
    return obj("v1", "Service", metadata(service.name, team.name, **_labels(team, service)), spec=spec)


def disruption_budget(team: Team, service: InferenceService) -> dict[str, Any]:
    """A drain takes at most one serving pod at a time (min 1: that one is the service's last)."""
    spec = {"selector": {"matchLabels": _selector(service)}, "maxUnavailable": 1}
    meta = metadata(service.name, team.name, **_labels(team, service))
    return obj("policy/v1", "PodDisruptionBudget", meta, spec=spec)


def autoscaler(team: Team, service: InferenceService) -> dict[str, Any]:
    """min to max replicas on the runtime's own metric, averaged per pod."""
    metric = {
        "type": "Pods",
        "pods": {
            "metric": {"name": scale_metric_name(service)},
            "target": {"type": "AverageValue", "averageValue": str(service.scale_target)},
        },
    }
    spec = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": service.name},
        "minReplicas": service.min_replicas,
        "maxReplicas": service.max_replicas,
        "metrics": [metric],
        "behavior": {"scaleDown": {"stabilizationWindowSeconds": service.scale_down_s}},
    }
    meta = metadata(service.name, team.name, **_labels(team, service))
    return obj("autoscaling/v2", "HorizontalPodAutoscaler", meta, spec=spec)
