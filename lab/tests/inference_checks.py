"""Inference services on the lab's shared cluster (docs/platform.md, "Inference services"):
applied through platform.yml, refused before any change, removed with the inventory entry.
Called by test_lab_platform_e2e.py, on its cluster."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gpurack.errors import ExitCode
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from lab_helpers import gone_or_going, json_run, wait


def assert_inference_service_applied_refused_and_removed(
    inventory: str, teams: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    """beta's service lands as a Deployment (its pod admitted under Pod Security "restricted" on
    the inference pool's node), Service, PodDisruptionBudget and HPA; alpha's, on a pool it has
    no quota for, is refused before any change; taken out of the inventory, beta's is deleted."""
    service = {
        "name": "embed",
        "pool": "lab-h200x1",
        "model": "s3://beta/models/all-MiniLM-L6-v2/",
        "image": "registry.gpurack.lab/pause:3.10.2",  # no runtime image yet: the objects are tested
        "replicas": {"min": 1, "max": 1},
        "resources": {"gpus": 0, "cpu": "100m", "memory": "64Mi"},
    }
    beta = next(t for t in teams if t["name"] == "beta")
    beta["inference"] = [service]
    argv = ["run", "platform", "-i", inventory, "-t", "inference"]
    code, applied = json_run([*argv, "-e", json.dumps({"gpurack_teams": teams})], capsys)
    assert code == 0, applied
    apps, core = client.AppsV1Api(), client.CoreV1Api()
    deployment = apps.read_namespaced_deployment("embed", "beta")
    assert deployment.spec.template.spec.priority_class_name == "gpurack-inference"
    budget = client.PolicyV1Api().read_namespaced_pod_disruption_budget("embed", "beta")
    assert budget.spec.max_unavailable == 1
    hpa = client.AutoscalingV2Api().read_namespaced_horizontal_pod_autoscaler("embed", "beta")
    assert (hpa.spec.min_replicas, hpa.spec.max_replicas) == (1, 1)
    assert core.read_namespaced_service("embed", "beta").spec.ports[0].port == 80
    selector = "gpurack.io/inference-service=embed"
    pods = wait(
        "embed's pod scheduled",
        lambda: [
            p for p in core.list_namespaced_pod("beta", label_selector=selector).items if p.spec.node_name
        ],
    )
    assert pods[0].spec.node_name == "lab-w1", "the service's pod must land on its inference pool's node"

    alpha = next(t for t in teams if t["name"] == "alpha")
    alpha["inference"] = [{**service, "model": "s3://alpha/models/all-MiniLM-L6-v2/"}]
    code, refused = json_run([*argv, "-e", json.dumps({"gpurack_teams": teams})], capsys)
    assert code == ExitCode.FAILED, refused
    assert [h["host"] for h in refused["hosts"] if h["changed"]] == [], refused
    with pytest.raises(ApiException) as missing:
        apps.read_namespaced_deployment("embed", "alpha")
    assert missing.value.status == 404

    code, removed = json_run(argv, capsys)
    assert code == 0, removed
    assert gone_or_going(lambda: dict(apps.read_namespaced_deployment("embed", "beta").metadata.to_dict()))
    with pytest.raises(ApiException) as deleted:
        client.AutoscalingV2Api().read_namespaced_horizontal_pod_autoscaler("embed", "beta")
    assert deleted.value.status == 404
