"""A Deployment pinned to one lab worker, its PodDisruptionBudget and its pods: what the
maintenance and patch tests drain (shared by test_lab_maintenance_e2e and test_lab_patch_e2e)."""

from __future__ import annotations

from typing import Any

from kubernetes import client
from kueue_jobs import NETCHECK
from lab_helpers import RESTRICTED

NAME = "pinned"
SELECTOR = "app=pinned"
APP = {"app": NAME}


def budget(**spec: int) -> dict[str, Any]:
    """The workload's PodDisruptionBudget, e.g. budget(minAvailable=1) or budget(maxUnavailable=1)."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": NAME},
        "spec": {"selector": {"matchLabels": APP}, **spec},
    }


def deployment(node: str) -> dict[str, Any]:
    """One pod pinned to `node`, tolerating its pool's taint (and nothing that cordons it)."""
    container = {
        "name": "main",
        "image": NETCHECK,
        "imagePullPolicy": "IfNotPresent",
        "args": ["sleep", "3600"],
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
        "securityContext": RESTRICTED,
    }
    template = {
        "metadata": {"labels": APP},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": node},
            "tolerations": [{"key": "gpurack.io/pool", "operator": "Exists", "effect": "NoSchedule"}],
            "terminationGracePeriodSeconds": 0,
            "containers": [container],
        },
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME},
        "spec": {"replicas": 1, "selector": {"matchLabels": APP}, "template": template},
    }


def pods(namespace: str, selector: str) -> list[Any]:
    """The selected pods that are not being deleted."""
    found = client.CoreV1Api().list_namespaced_pod(namespace, label_selector=selector).items
    return [p for p in found if not p.metadata.deletion_timestamp]


def running(namespace: str, selector: str, node: str | None = None) -> list[Any]:
    """The selected pods running (on `node`, when given)."""
    return [
        p
        for p in pods(namespace, selector)
        if p.status.phase == "Running" and node in (None, p.spec.node_name)
    ]


def pending(namespace: str, selector: str) -> list[Any]:
    """The selected pods waiting to be scheduled or started."""
    return [p for p in pods(namespace, selector) if p.status.phase == "Pending"]


def node(name: str) -> Any:
    """The Node as the API returns it."""
    return client.CoreV1Api().read_node(name)
