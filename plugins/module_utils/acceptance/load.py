# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The load tool's Job (workloads/loadgen: locust as a library, one JSON line at the end), run
in the service's namespace, so the team's NetworkPolicy admits it as it admits any client.

It tolerates the pools' taints, so it can run on any GPU node of the cluster; its own CPU is
bounded, so it cannot take a node's CPU from the servers it measures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.job import SECURITY_CONTEXT
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import SERVICE_LABEL

LABEL = "gpurack.io/inference-acceptance"
POOL_TAINT = "gpurack.io/pool"  # node_labels: every pool's nodes carry it (NoSchedule)
SPREAD: Mapping[str, Any] = {
    "weight": 100,
    "podAffinityTerm": {
        "labelSelector": {"matchExpressions": [{"key": SERVICE_LABEL, "operator": "Exists"}]},
        "topologyKey": "kubernetes.io/hostname",
    },
}


@dataclass(frozen=True)
class LoadSpec:
    """One load: `concurrency` requests in flight, at most `requests` and `seconds`;
    `wait_s` > 0 first waits (as long) for the first good answer and reports when it came."""

    name: str
    namespace: str
    image: str
    url: str
    model: str
    concurrency: int
    requests: int
    seconds: float
    wait_s: float = 0.0
    run: str = ""  # the acceptance run it belongs to (its label; default the Job's name)
    cpu: str = "500m"
    memory: str = "256Mi"

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> LoadSpec:
        """Each field converted to its type (templated values arrive as text).

        Raises:
            ValueError: a missing key or a bound below 1.
        """
        kinds = {"int": int, "float": float, "str": str}
        fields = cls.__dataclass_fields__
        missing = [n for n, f in fields.items() if data.get(n) is None and f.default is MISSING]
        if missing:
            raise ValueError(f"load job: no {', '.join(missing)}")
        spec = cls(**{n: kinds[str(f.type)](data[n]) for n, f in fields.items() if data.get(n) is not None})
        if spec.concurrency < 1 or spec.requests < 1 or spec.seconds <= 0 or spec.wait_s < 0:
            raise ValueError("load job: concurrency and requests must be >= 1, seconds > 0, wait_s >= 0")
        return spec


def load_job(spec: LoadSpec) -> dict[str, Any]:
    """The Job: one pod, never restarted (a second attempt would mix two runs' figures)."""
    args = [
        "--url", spec.url, "--model", spec.model, "--concurrency", str(spec.concurrency),
        "--requests", str(spec.requests), "--seconds", f"{spec.seconds:g}",
    ]  # fmt: skip
    if spec.wait_s > 0:
        args += ["--wait-ready", f"{spec.wait_s:g}"]
    resources = {"cpu": spec.cpu, "memory": spec.memory}
    labels = {"app.kubernetes.io/name": "gpurack-loadgen", "app.kubernetes.io/managed-by": "gpurack"}
    labels[LABEL] = spec.run or spec.name
    pod = {
        "restartPolicy": "Never",
        "enableServiceLinks": False,
        "tolerations": [{"key": POOL_TAINT, "operator": "Exists", "effect": "NoSchedule"}],
        # not beside the servers it measures, where another node can take it: its CPU would be
        # theirs, and a replica that the rollout or the HPA adds could find no room
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [SPREAD]}},
        "containers": [
            {
                "name": "loadgen",
                "image": spec.image,
                "imagePullPolicy": "IfNotPresent",
                "args": args,
                "env": [{"name": "HOME", "value": "/tmp"}],
                "resources": {"requests": resources, "limits": resources},
                "securityContext": dict(SECURITY_CONTEXT),
                "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
            }
        ],
        # the root file system is read-only (Pod Security "restricted", as the trainer's)
        "volumes": [{"name": "tmp", "emptyDir": {}}],
    }
    deadline = int(spec.wait_s + spec.seconds) + 120
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": spec.name, "namespace": spec.namespace, "labels": labels},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": deadline,
            "ttlSecondsAfterFinished": 3600,
            "template": {"metadata": {"labels": labels}, "spec": pod},
        },
    }
