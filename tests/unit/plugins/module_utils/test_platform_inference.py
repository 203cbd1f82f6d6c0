"""Inference services from gpurack_teams: the objects built for each, and the services refused
before any change (a pool that does not serve inference, no or too little quota, lent quota)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import (
    PlatformInputError,
    build_objects,
)
from platform_inputs import TEAMS, site

EMBED = {
    "name": "embed",
    "pool": "h200-inference",
    "model": "s3://inference/models/all-MiniLM-L6-v2/",
    "runtime": "vllm",
    "replicas": {"min": 1, "max": 1},
    "scale": {"metric": "requests_waiting", "target": 4},
    "latency_p99_ms": 250,
}


def _teams(**service: Any) -> list[dict[str, Any]]:
    teams = copy.deepcopy(TEAMS)
    teams[1]["inference"] = [{**EMBED, **service}]
    return teams


def _by_kind(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["kind"]: o for o in objects}


def test_a_service_gets_its_deployment_service_budget_and_autoscaler() -> None:
    objects = build_objects(site(gpurack_teams=_teams()), ("inference",))
    assert [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects] == [
        ("PriorityClass", None, "gpurack-inference"),
        ("ResourceQuota", "inference", "gpurack-inference"),
        ("Deployment", "inference", "embed"),
        ("Service", "inference", "embed"),
        ("PodDisruptionBudget", "inference", "embed"),
        ("HorizontalPodAutoscaler", "inference", "embed"),
        ("ResourceQuota", "research", "gpurack-inference"),
    ]
    kinds = _by_kind(objects)
    # Only a team's own services run at the inference priority: a team that serves nothing
    # gets 0 pods there, so none of its jobs can preempt with it.
    quotas = {o["metadata"]["namespace"]: o["spec"] for o in objects if o["kind"] == "ResourceQuota"}
    assert quotas["research"]["hard"] == {"pods": "0"}
    assert quotas["inference"]["hard"] == {"pods": "2"}  # its most replicas, and one for a rollout
    assert quotas["inference"]["scopeSelector"]["matchExpressions"] == [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["gpurack-inference"]}
    ]
    pod = kinds["Deployment"]["spec"]["template"]["spec"]
    # On the inference pool's nodes only, above training and batch pods.
    assert pod["nodeSelector"] == {"gpurack.io/pool": "h200-inference"}
    assert pod["tolerations"] == []  # the pool has no taints; never gpurack.io/validating
    assert pod["priorityClassName"] == "gpurack-inference"
    assert kinds["PriorityClass"]["value"] > 0
    (server,) = pod["containers"]
    assert server["resources"]["limits"] == {"cpu": "1", "memory": "4Gi", "nvidia.com/gpu": "1"}
    assert server["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert server["startupProbe"]["periodSeconds"] * server["startupProbe"]["failureThreshold"] >= 1800
    assert {"name": "GPURACK_MODEL_URI", "value": EMBED["model"]} in server["env"]
    # A rollout starts a pod before it stops one; the HPA owns the replica count.
    spec = kinds["Deployment"]["spec"]
    assert spec["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}
    assert "replicas" not in spec
    hpa = kinds["HorizontalPodAutoscaler"]["spec"]
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (1, 1)
    assert hpa["metrics"][0]["pods"]["metric"]["name"] == "gpurack_inference_requests_waiting"
    assert hpa["metrics"][0]["pods"]["target"] == {"type": "AverageValue", "averageValue": "4"}
    assert kinds["Service"]["spec"]["selector"] == {"gpurack.io/inference-service": "embed"}


def test_no_service_builds_nothing() -> None:
    assert build_objects(site(), ("inference",)) == []


def test_a_service_on_a_training_pool_is_refused() -> None:
    teams = _teams(pool="h100-train-a")
    teams[1]["quota"]["h100-train-a"] = {"gpus": 4}
    with pytest.raises(PlatformInputError, match="pool h100-train-a is a distributed-training pool"):
        site(gpurack_teams=teams)


@pytest.mark.parametrize(
    ("service", "message"),
    [
        (
            {"replicas": {"min": 1, "max": 2}},
            "need up to 3 GPUs of pool h200-inference",
        ),
        ({"model": "s3://research/models/x/"}, "model must be an s3:// URI in the team's bucket"),
        ({"runtime": "triton"}, "runtime must be one of vllm, got 'triton'"),
        ({"name": "7b-chat"}, "must start with a letter"),
        ({"scale": {"metric": ["a"], "target": 4}}, "scale.metric must be a metric name"),
        ({"scale": {"metric": "gpu_memory", "target": 4}}, "scale.metric must be one the runtime serves"),
        ({"replicas": {"min": 3, "max": 2}}, "replicas needs 1 <= min <= max"),
        ({"name": "Embed"}, "must be a DNS label"),
        ({"pool": "nowhere"}, "pool 'nowhere' is not a pool"),
        ({"latency_p99": 250}, "unknown key"),
    ],
)
def test_a_bad_service_is_refused_with_its_team_and_name(service: dict[str, Any], message: str) -> None:
    with pytest.raises(PlatformInputError, match="team inference") as raised:
        site(gpurack_teams=_teams(**service))
    assert message in str(raised.value)


def test_a_service_where_the_team_has_no_quota_is_refused() -> None:
    teams = _teams()
    teams[0]["inference"] = [{**EMBED, "model": "s3://research/models/m/"}]
    del teams[0]["quota"]["h200-inference"]
    with pytest.raises(
        PlatformInputError, match="team research: inference service embed: the team has no quota"
    ):
        site(gpurack_teams=teams)


def test_inference_quota_is_never_lent() -> None:
    teams = _teams()
    teams[1]["lending_limit"]["h200-inference"] = {"gpus": 1}
    with pytest.raises(
        PlatformInputError, match="h200-inference serves inference, whose quota is never lent"
    ):
        site(gpurack_teams=teams)
    queues = {
        o["metadata"]["name"]: o for o in build_objects(site(), ("kueue",)) if o["kind"] == "ClusterQueue"
    }
    for team in ("inference", "research"):
        flavors = {f["name"]: f for f in queues[team]["spec"]["resourceGroups"][0]["flavors"]}
        assert {r["lendingLimit"] for r in flavors["h200-inference"]["resources"]} == {"0"}
        assert all(
            "lendingLimit" not in r or r["name"] == "nvidia.com/gpu"
            for r in flavors["h100-train-a"]["resources"]
        )


def test_the_gpus_of_a_teams_services_on_one_pool_add_up() -> None:
    teams = _teams()
    teams[1]["inference"].append({**EMBED, "name": "rerank"})
    with pytest.raises(PlatformInputError, match="need up to 4 GPUs of pool h200-inference"):
        site(gpurack_teams=teams)
