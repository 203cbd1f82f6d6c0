"""Kueue jobs for the lab's end-to-end tests: a Job for a team's LocalQueue, and its Workload's
state as Kueue reports it (the platform and maintenance tests share them)."""

from __future__ import annotations

from typing import Any

from kubernetes import client
from lab_helpers import RESTRICTED

KUEUE = ("kueue.x-k8s.io", "v1beta2")
NETCHECK = "registry.gpurack.lab/netcheck:v1"
HGX = "lab-hgx-h100x8-ib"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


def team_job(
    name: str,
    team: str,
    gpus: int,
    priority: str,
    node_selector: dict[str, str] | None = None,
    *,
    sleep_s: int = 600,
    backoff_limit: int = 0,
) -> dict[str, Any]:
    """A Job for the team's LocalQueue that sleeps: suspended, with no toleration or pool of its own."""
    resources = {"cpu": "10m", "memory": "16Mi"}
    if gpus:
        resources["nvidia.com/gpu"] = str(gpus)
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "containers": [
            {
                "name": "main",
                "image": NETCHECK,
                "imagePullPolicy": "IfNotPresent",
                "args": ["sleep", str(sleep_s)],
                "resources": {"requests": resources, "limits": resources},
                "securityContext": RESTRICTED,
            }
        ],
    }
    if node_selector:
        pod["nodeSelector"] = node_selector
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {QUEUE_LABEL: team, PRIORITY_LABEL: priority}},
        "spec": {"suspend": True, "backoffLimit": backoff_limit, "template": {"spec": pod}},
    }


def job_workload(team: str, job: str, api: client.CustomObjectsApi | None = None) -> dict[str, Any] | None:
    """The Workload Kueue made for the team's Job (through `api`, the lab cluster's by default)."""
    found = (api or client.CustomObjectsApi()).list_namespaced_custom_object(*KUEUE, team, "workloads")
    items = found["items"]
    owned = [w for w in items if any(o["name"] == job for o in w["metadata"].get("ownerReferences", []))]
    return owned[0] if owned else None


def workload_condition(workload: dict[str, Any] | None, kind: str) -> dict[str, Any] | None:
    for found in ((workload or {}).get("status") or {}).get("conditions") or []:
        if found["type"] == kind:
            return dict(found)
    return None


def admitted_workload(team: str, job: str) -> dict[str, Any] | None:
    workload = job_workload(team, job)
    state = workload_condition(workload, "Admitted")
    return workload if state and state["status"] == "True" else None


def gpu_usage(team: str) -> tuple[str, str] | None:
    """The team's ClusterQueue's nvidia.com/gpu in use on the H100 flavor, and how much is borrowed."""
    status = (
        client.CustomObjectsApi().get_cluster_custom_object(*KUEUE, "clusterqueues", team).get("status") or {}
    )
    for flavor in status.get("flavorsUsage") or []:
        for resource in flavor["resources"] if flavor["name"] == HGX else []:
            if resource["name"] == "nvidia.com/gpu":
                return (str(resource.get("total", "0")), str(resource.get("borrowed", "0")))
    return None
