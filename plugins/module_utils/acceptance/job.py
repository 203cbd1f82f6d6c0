# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The acceptance job's objects: a headless Service and an Indexed Job queued through Kueue.

The Job's pods find each other by name (`<job>-0.<job>` is rank 0, the rendezvous), which
the headless Service publishes before the pods are ready. Kueue suspends the Job at
creation (the queue-name label) and lets it start on admission, adding its flavor's node
selector and tolerations. A pod deleted or failed is recreated by the Job controller
(`backoffLimit`), and the trainer resumes from the newest checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass
from typing import Any

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
# Kueue's topology request on a pod set: every pod within one domain of the level (required), or
# as few domains as it can (preferred).
TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-{mode}-topology"
TOPOLOGY_MODES = ("required", "preferred")
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
RUN_LABEL = "gpurack.io/acceptance-run"
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
RENDEZVOUS_PORT = 29500
# Pod Security "restricted": the trainer image runs as its own non-root user.
SECURITY_CONTEXT: Mapping[str, Any] = {
    "runAsNonRoot": True,
    "runAsUser": 65532,
    "runAsGroup": 65532,
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


@dataclass(frozen=True)
class JobSpec:
    """What the acceptance job is: where it queues, what it runs and on how much."""

    name: str
    namespace: str
    queue: str
    image: str
    data: str
    weights: str
    checkpoints: str
    s3_secret: str
    pods: int = 2
    gpus_per_pod: int = 1
    gpu_resource: str = "nvidia.com/gpu"
    cpu: str = "1"
    memory: str = "1536Mi"
    window_s: float = 90.0
    checkpoint_interval_steps: int = 10
    batch_size: int = 16
    priority_class: str = ""
    backoff_limit: int = 6
    image_pull_policy: str = "IfNotPresent"
    topology_level: str = ""  # a node label key of the flavor's Topology; "" asks for none
    topology_mode: str = "required"

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> JobSpec:
        """Each field converted to its type (templated values may arrive as text).

        Raises:
            ValueError: a missing key, a value of the wrong kind, or a count below 1.
        """
        kinds = {"int": int, "float": float, "str": str}
        values = {}
        for name, spec_field in cls.__dataclass_fields__.items():
            if data.get(name) is not None:
                values[name] = kinds[str(spec_field.type)](data[name])
        missing = [n for n, f in cls.__dataclass_fields__.items() if n not in values and f.default is MISSING]
        if missing:
            raise ValueError(f"acceptance job: no {', '.join(missing)}")
        spec = cls(**values)
        if (
            spec.pods < 1
            or spec.checkpoint_interval_steps < 1
            or spec.window_s <= 0
            or spec.backoff_limit < 0
        ):
            raise ValueError("acceptance job: pods and checkpoint_interval_steps must be >= 1, window_s > 0")
        if spec.topology_mode not in TOPOLOGY_MODES:
            raise ValueError(
                f"acceptance job: topology_mode must be required or preferred, got {spec.topology_mode!r}"
            )
        return spec


def _labels(spec: JobSpec) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": "gpurack-acceptance",
        "app.kubernetes.io/managed-by": "gpurack",
        RUN_LABEL: spec.name,
    }


def service(spec: JobSpec) -> dict[str, Any]:
    """The headless Service that names the pods (`<job>-<index>.<job>`), ready or not."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": spec.name, "namespace": spec.namespace, "labels": _labels(spec)},
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": {RUN_LABEL: spec.name},
            "ports": [{"name": "rendezvous", "port": RENDEZVOUS_PORT, "targetPort": RENDEZVOUS_PORT}],
        },
    }


def _container(spec: JobSpec) -> dict[str, Any]:
    resources: dict[str, Any] = {"cpu": spec.cpu, "memory": spec.memory}
    if spec.gpus_per_pod > 0:
        resources[spec.gpu_resource] = str(spec.gpus_per_pod)
    args = [
        "--data", spec.data,
        "--weights", spec.weights,
        "--checkpoints", spec.checkpoints,
        "--window-s", f"{spec.window_s:g}",
        "--checkpoint-interval-steps", str(spec.checkpoint_interval_steps),
        "--batch-size", str(spec.batch_size),
        "--log-every-steps", "1",
    ]  # fmt: skip
    env = [
        {"name": "WORLD_SIZE", "value": str(spec.pods)},
        {"name": "MASTER_ADDR", "value": f"{spec.name}-0.{spec.name}"},
        {"name": "MASTER_PORT", "value": str(RENDEZVOUS_PORT)},
        {"name": "HOME", "value": "/tmp"},
    ]
    return {
        "name": "trainer",
        "image": spec.image,
        "imagePullPolicy": spec.image_pull_policy,
        "args": args,
        "env": env,
        "envFrom": [{"secretRef": {"name": spec.s3_secret}}],
        "ports": [{"containerPort": RENDEZVOUS_PORT, "name": "rendezvous"}],
        "resources": {"requests": resources, "limits": resources},
        "securityContext": dict(SECURITY_CONTEXT),
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }


def job(spec: JobSpec) -> dict[str, Any]:
    """The Indexed Job of `pods` pods, queued in the team's LocalQueue."""
    labels = {**_labels(spec), QUEUE_LABEL: spec.queue}
    if spec.priority_class:
        labels[PRIORITY_LABEL] = spec.priority_class
    pod = {
        "subdomain": spec.name,
        "restartPolicy": "Never",
        "enableServiceLinks": False,
        "containers": [_container(spec)],
        "volumes": [{"name": "tmp", "emptyDir": {}}],
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": spec.name, "namespace": spec.namespace, "labels": labels},
        "spec": {
            "suspend": True,
            "completionMode": "Indexed",
            "completions": spec.pods,
            "parallelism": spec.pods,
            "backoffLimit": spec.backoff_limit,
            "template": {"metadata": _template_metadata(spec), "spec": pod},
        },
    }


def _template_metadata(spec: JobSpec) -> dict[str, Any]:
    """The pods' labels, and the topology they ask Kueue for (all pods under one leaf)."""
    metadata: dict[str, Any] = {"labels": _labels(spec)}
    if spec.topology_level:
        metadata["annotations"] = {TOPOLOGY_ANNOTATION.format(mode=spec.topology_mode): spec.topology_level}
    return metadata


def objects(spec: JobSpec) -> list[dict[str, Any]]:
    """Service first, so the pods' names resolve from the start."""
    return [service(spec), job(spec)]
