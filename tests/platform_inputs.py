"""Inventory in the shape platform_site reads, shared by the platform tests (a plain module)."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.site import Site, site_from_hostvars

H100 = {
    "name": "h100-train-a",
    "workload": "distributed-training",
    "sharing": "full-gpu",
    "taints": [{"key": "gpurack.io/pool", "value": "h100-train-a", "effect": "NoSchedule"}],
}
H200 = {"name": "h200-inference", "workload": "inference", "sharing": "full-gpu"}
TEAMS: list[dict[str, Any]] = [
    {
        "name": "research",
        "groups": ["research-users"],
        "quota": {"h100-train-a": {"gpus": 12, "cpu": "96", "memory": "1Ti"}, "h200-inference": {"gpus": 0}},
        "borrowing_limit": {"h100-train-a": {"gpus": 4}},
        "priority": "training",
    },
    {
        "name": "inference",
        "groups": ["inference-users", "inference-oncall"],
        "quota": {
            "h100-train-a": {"gpus": 4},
            "h200-inference": {"gpus": 2, "cpu": "500m", "memory": "2048Mi"},
        },
        "lending_limit": {"h100-train-a": {"gpus": 2}},
        "priority": "inference",
        "pod_security": "baseline",
    },
]


def hostvars(h100_facts: int | None = None) -> dict[str, dict[str, Any]]:
    """Two h100 hosts expecting 8 GPUs (the first with `h100_facts` GPUs as facts when given), two h200."""
    found: dict[str, dict[str, Any]] = {}
    for host in ("h100-a-01", "h100-a-02"):
        found[host] = {"gpurack_pool": copy.deepcopy(H100), "gpurack_expect": {"gpu": {"count": 8}}}
    if h100_facts is not None:
        found["h100-a-01"]["gpurack_gpu"] = {"count": h100_facts}
    for host in ("h200-inf-01", "h200-inf-02"):
        found[host] = {"gpurack_pool": copy.deepcopy(H200), "gpurack_expect": {"gpu": {"count": 1}}}
    found["cp-01"] = {}
    return found


# Where prometheus-adapter queries Prometheus (playbooks/platform.yml derives it from cp-01).
PROMETHEUS_URL = "http://192.0.2.11:9090/"


def site_vars(**overrides: Any) -> dict[str, Any]:
    return {
        "gpurack_teams": copy.deepcopy(TEAMS),
        "gpurack_cohort": "site",
        "gpurack_prometheus_url": PROMETHEUS_URL,
        **overrides,
    }


def site(**overrides: Any) -> Site:
    found = hostvars()
    return site_from_hostvars(found, sorted(found), site_vars(**overrides))


def kueue_crd_dir() -> Path:
    """Kueue v0.17.0's CRDs in the Go module cache the lab's k8s build downloads into."""
    cache = Path(os.environ.get("GPURACK_K8S_CACHE", Path.home() / ".cache" / "gpurack" / "k8s"))
    gomod = Path(os.environ.get("GPURACK_K8S_GOMODCACHE", cache / "gomod"))
    return gomod / "sigs.k8s.io" / "kueue@v0.17.0" / "config" / "components" / "crd" / "bases"
