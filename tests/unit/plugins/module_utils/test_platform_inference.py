"""Inference services from gpurack_teams: the objects built for each, and the services refused
before any change (a pool that does not serve inference, no or too little quota, lent quota)."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import (
    PlatformInputError,
    build_objects,
    model_cache_dirs,
    serving_target,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.inference import model_cache_volume
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.metrics_adapter import (
    metrics_adapter_objects,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import ModelCacheConfig, Pool
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.serving import (
    NVME_SCRATCH_MOUNTPOINT,
    OWNED_FLAGS,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.site import site_from_hostvars
from gpurack_serving import launch
from platform_inputs import H200, TEAMS, hostvars, site, site_vars

EMBED = {
    "name": "embed",
    "pool": "h200-inference",
    "model": "s3://inference/models/all-MiniLM-L6-v2/",
    "runtime": "vllm",
    "replicas": {"min": 1, "max": 1},
    "scale": {"metric": "requests_waiting", "target": 4},
    "latency_p99_ms": 250,
}


# Of team, pool and the default cache path: the volume's and the claim's names.
CACHE_DIGEST = hashlib.sha256(b"inference\0h200-inference\0/var/lib/gpurack/model-cache").hexdigest()[:8]


def _teams(**service: Any) -> list[dict[str, Any]]:
    teams = copy.deepcopy(TEAMS)
    teams[1]["inference"] = [{**EMBED, **service}]
    return teams


def _by_kind(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["kind"]: o for o in objects}


def test_a_service_gets_its_deployment_service_budget_and_autoscaler() -> None:
    serving = site(gpurack_teams=_teams())
    # prometheus-adapter's objects come too (test_platform_metrics_adapter.py has them).
    adapter = metrics_adapter_objects(serving)
    built = build_objects(serving, ("inference",))
    assert all(o in built for o in adapter)
    objects = [o for o in built if o not in adapter]
    assert [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects] == [
        ("PriorityClass", None, "gpurack-inference"),
        ("PersistentVolume", None, f"gpurack-model-cache-inference-h200-inference-{CACHE_DIGEST}"),
        ("ResourceQuota", "inference", "gpurack-inference"),
        ("PersistentVolumeClaim", "inference", f"gpurack-model-cache-h200-inference-{CACHE_DIGEST}"),
        ("NetworkPolicy", "inference", "allow-inference-clients"),
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
    # Kubernetes' own scale-down wait unless the service names one.
    assert hpa["behavior"] == {"scaleDown": {"stabilizationWindowSeconds": 300}}
    # A stopping pod serves on while the endpoints catch up (a rollout fails no request).
    drain = ["python", "-m", "gpurack_serving.drain", "10"]  # waits 10 s, closing kept-alive connections
    assert server["lifecycle"] == {"preStop": {"exec": {"command": drain}}}
    assert kinds["Service"]["spec"]["selector"] == {"gpurack.io/inference-service": "embed"}
    # The namespace denies all ingress; its model servers' http port takes clients and Prometheus.
    policy = kinds["NetworkPolicy"]["spec"]
    assert policy["podSelector"] == {
        "matchExpressions": [{"key": "gpurack.io/inference-service", "operator": "Exists"}]
    }
    assert policy["ingress"] == [{"ports": [{"protocol": "TCP", "port": 8000}]}]


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
        (
            {"scale": {"target": 4, "down_s": 7200}},
            "scale.down_s must be a whole number of seconds from 0 to 3600",
        ),
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


def test_the_server_starts_through_the_nodes_model_cache() -> None:
    """The launcher's settings come from the pool's cache; the folder is the team's, on the node."""
    objects = build_objects(site(gpurack_teams=_teams(args=["--runner", "pooling"])), ("inference",))
    kinds = _by_kind(objects)
    (server,) = kinds["Deployment"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in server["env"]}
    assert env["GPURACK_MODEL_CACHE_LIMIT"] == str(100 * 2**30)  # 100Gi by default
    assert (env["GPURACK_SERVED_NAME"], env["GPURACK_PORT"]) == ("embed", "8000")
    assert server["args"] == ["--runner", "pooling"]
    assert server["volumeMounts"] == [
        {"name": "model-cache", "mountPath": env["GPURACK_MODEL_CACHE"]},
        {"name": "shm", "mountPath": "/dev/shm"},
    ]
    claim = kinds["PersistentVolumeClaim"]
    volumes = kinds["Deployment"]["spec"]["template"]["spec"]["volumes"]
    assert volumes == [
        {"name": "model-cache", "persistentVolumeClaim": {"claimName": claim["metadata"]["name"]}},
        {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "512Mi"}},
    ]
    volume = kinds["PersistentVolume"]["spec"]
    # No hostPath in the pod (Pod Security "restricted"): the platform's volume names the folder.
    assert volume["hostPath"] == {"path": "/var/lib/gpurack/model-cache/inference", "type": "Directory"}
    assert volume["claimRef"] == {"namespace": "inference", "name": claim["metadata"]["name"]}
    assert claim["spec"]["volumeName"] == kinds["PersistentVolume"]["metadata"]["name"]
    terms = volume["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert terms == [
        {"matchExpressions": [{"key": "gpurack.io/pool", "operator": "In", "values": ["h200-inference"]}]}
    ]
    dirs = model_cache_dirs(site(gpurack_teams=_teams()))
    assert dirs == [
        {
            "host": h,
            "root": "/var/lib/gpurack/model-cache",
            "path": "/var/lib/gpurack/model-cache/inference",
            "uid": 65532,
        }
        for h in ("h200-inf-01", "h200-inf-02")
    ]


def _site_with_pool(**pool: Any) -> Any:
    found = hostvars()
    for host in ("h200-inf-01", "h200-inf-02"):
        found[host]["gpurack_pool"] = {**H200, **pool}
    return site_from_hostvars(found, sorted(found), site_vars(gpurack_teams=_teams()))


def test_the_cache_is_on_nvme_scratch_where_the_inventory_names_it() -> None:
    found = hostvars()
    for host in ("h200-inf-01", "h200-inf-02"):
        found[host].update(nvme_scratch_devices=["/dev/nvme0n1"], nvme_scratch_mountpoint="/scratch")
    scratch = site_from_hostvars(found, sorted(found), site_vars(gpurack_teams=_teams()))
    assert scratch.pool("h200-inference").model_cache.path == "/scratch/gpurack-model-cache"  # type: ignore[union-attr]
    sized = _site_with_pool(model_cache={"path": "/srv/models/", "size": "20Gi"}).pool("h200-inference")
    assert (sized.model_cache.path, sized.model_cache.size_bytes) == ("/srv/models", 20 * 2**30)


@pytest.mark.parametrize(
    ("cache", "message"),
    [
        ({"path": "models"}, "model_cache.path must be an absolute folder path"),
        ({"path": "/"}, "model_cache.path must be an absolute folder path"),
        ({"path": "/srv/../etc"}, "model_cache.path must be an absolute folder path"),
        ({"size": "-1Gi"}, "model_cache.size"),
        ({"size": "0"}, "model_cache.size must be a whole number of bytes"),
        ({"size": "1.5"}, "model_cache.size must be a whole number of bytes"),
        ({"sise": "1Gi"}, "unknown key"),
        ("20Gi", "model_cache must be a mapping"),
    ],
)
def test_a_bad_model_cache_is_refused(cache: Any, message: str) -> None:
    with pytest.raises(PlatformInputError, match="host h200-inf-01: gpurack_pool: model_cache") as raised:
        _site_with_pool(model_cache=cache)
    assert message in str(raised.value)


def test_only_an_inference_pool_keeps_models() -> None:
    found = hostvars()
    for host in ("h100-a-01", "h100-a-02"):
        found[host]["gpurack_pool"]["model_cache"] = {"size": "1Gi"}
    with pytest.raises(PlatformInputError, match="only an inference pool keeps models"):
        site_from_hostvars(found, sorted(found), site_vars())


def test_hosts_of_a_pool_keep_models_alike() -> None:
    found = hostvars()
    found["h200-inf-02"]["gpurack_pool"]["model_cache"] = {"size": "1Gi"}
    with pytest.raises(PlatformInputError, match="differ in their model cache's path or size"):
        site_from_hostvars(found, sorted(found), site_vars())


@pytest.mark.parametrize("args", [["--port", "9000"], ["--model=/x"], "--runner pooling", [1]])
def test_args_that_gpurack_sets_or_are_not_strings_are_refused(args: Any) -> None:
    with pytest.raises(PlatformInputError, match="args"):
        site(gpurack_teams=_teams(args=args))


def test_the_platform_and_the_launcher_own_the_same_flags() -> None:
    assert OWNED_FLAGS == launch.OWNED_FLAGS


def test_the_scratch_default_is_the_nvme_scratch_roles() -> None:
    defaults = Path(__file__).resolve().parents[4] / "roles" / "nvme_scratch" / "defaults" / "main.yml"
    assert yaml.safe_load(defaults.read_text())["nvme_scratch_mountpoint"] == NVME_SCRATCH_MOUNTPOINT


def test_volume_names_differ_for_teams_and_pools_whose_names_join_alike() -> None:
    def pool(name: str) -> Pool:
        cache = ModelCacheConfig("/var/lib/gpurack/model-cache", 1)
        return Pool(name, ("h",), (), "full-gpu", "inference", 1, "expect", cache)

    first = model_cache_volume(pool("prod-a"), "ml")[0]["metadata"]["name"]
    second = model_cache_volume(pool("a"), "ml-prod")[0]["metadata"]["name"]
    assert first.startswith("gpurack-model-cache-ml-prod-a-")
    assert second.startswith("gpurack-model-cache-ml-prod-a-")
    assert first != second


def test_a_services_scale_down_wait_is_its_own() -> None:
    objects = build_objects(
        site(gpurack_teams=_teams(scale={"metric": "requests_running", "target": 2, "down_s": 15})),
        ("inference",),
    )
    hpa = _by_kind(objects)["HorizontalPodAutoscaler"]["spec"]
    assert hpa["behavior"] == {"scaleDown": {"stabilizationWindowSeconds": 15}}


def test_the_acceptance_test_finds_a_service_where_it_answers() -> None:
    target = serving_target(site(gpurack_teams=_teams()), "inference", "embed")
    assert target["url"] == "http://embed.inference.svc"
    assert target["selector"] == "gpurack.io/inference-service=embed"
    assert (target["replicas"], target["latency_p99_ms"], target["gpus_per_replica"]) == (
        {"min": 1, "max": 1},
        250,
        1,
    )
    assert target["cache"] and {c["path"] for c in target["cache"]} == {
        "/var/lib/gpurack/model-cache/inference"
    }
    assert {c["host"] for c in target["cache"]} == set(target["hosts"])
    with pytest.raises(
        ValueError, match="team inference has no inference service 'chat'; its services: embed"
    ):
        serving_target(site(gpurack_teams=_teams()), "inference", "chat")
    with pytest.raises(ValueError, match="no team 'gamma'"):
        serving_target(site(gpurack_teams=_teams()), "gamma", "embed")
