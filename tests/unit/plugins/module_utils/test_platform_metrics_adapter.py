"""prometheus-adapter in the inference section: its rules come from the runtimes' own metrics
(serving.RUNTIMES), one per custom metric an HPA reads, and the objects that run it (RBAC, the
Deployment on a control-plane node, its Service and the custom metrics APIServices)."""

from __future__ import annotations

import copy
import json
from collections.abc import MutableMapping
from typing import Any, cast

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import (
    PlatformInputError,
    build_objects,
    serving,
    site_from_dict,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import metrics_adapter as adapter
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.serving import Runtime
from platform_inputs import PROMETHEUS_URL, TEAMS, site

EMBED = {
    "name": "embed",
    "pool": "h200-inference",
    "model": "s3://inference/models/all-MiniLM-L6-v2/",
    "replicas": {"min": 1, "max": 1},
    "scale": {"metric": "requests_running", "target": 2},
}
NAME = "gpurack-prometheus-adapter"
NAMESPACE = "gpurack-observability"


def _teams(**service: Any) -> list[dict[str, Any]]:
    teams = copy.deepcopy(TEAMS)
    teams[1]["inference"] = [{**EMBED, **service}]
    return teams


def _objects(**overrides: Any) -> dict[tuple[str, str], dict[str, Any]]:
    built = build_objects(site(gpurack_teams=_teams(), **overrides), ("inference",))
    return {(o["kind"], o["metadata"]["name"]): o for o in built}


def _config(objects: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    text = objects[("ConfigMap", NAME)]["data"]["config.yaml"]
    # The adapter reads its config as YAML; the platform writes JSON, which is YAML too.
    assert yaml.safe_load(text) == json.loads(text)
    return cast(dict[str, Any], json.loads(text))


def test_the_rules_are_the_vllm_runtimes_metrics_summed_per_pod() -> None:
    assert adapter.adapter_rules() == [
        # The seconds of latency per second: the mean requests in flight (a counter's rate).
        {
            "seriesQuery": '{__name__="vllm:e2e_request_latency_seconds_sum",namespace!="",pod!=""}',
            "resources": {"overrides": {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}},
            "name": {
                "matches": "^vllm:e2e_request_latency_seconds_sum$",
                "as": "gpurack_inference_requests_in_flight",
            },
            "metricsQuery": "sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)",
        },
        {
            "seriesQuery": '{__name__="vllm:num_requests_running",namespace!="",pod!=""}',
            "resources": {"overrides": {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}},
            "name": {"matches": "^vllm:num_requests_running$", "as": "gpurack_inference_requests_running"},
            "metricsQuery": "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
        },
        {
            "seriesQuery": '{__name__="vllm:num_requests_waiting",namespace!="",pod!=""}',
            "resources": {"overrides": {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}},
            "name": {"matches": "^vllm:num_requests_waiting$", "as": "gpurack_inference_requests_waiting"},
            "metricsQuery": "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
        },
    ]


def test_every_metric_a_service_may_scale_on_has_a_rule() -> None:
    served = {rule["name"]["as"] for rule in adapter.adapter_rules()}
    for name, runtime in serving.RUNTIMES.items():
        for metric in serving.scale_metrics(runtime):
            objects = build_objects(
                site(gpurack_teams=_teams(runtime=name, scale={"metric": metric, "target": 1})),
                ("inference",),
            )
            (hpa,) = [o for o in objects if o["kind"] == "HorizontalPodAutoscaler"]
            assert hpa["spec"]["metrics"][0]["pods"]["metric"]["name"] in served


def test_a_new_runtime_metric_is_a_new_rule_in_the_adapters_config(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _objects()
    runtimes = cast(MutableMapping[str, Runtime], serving.RUNTIMES)
    monkeypatch.setitem(
        runtimes,
        "tgi",
        Runtime(image="tgi:1", port=80, health_path="/health", metrics={"queue_size": "tgi_queue_size"}),
    )
    after = _objects()
    rules = {rule["name"]["as"]: rule for rule in _config(after)["rules"]}
    assert sorted(rules) == [
        "gpurack_inference_queue_size",
        "gpurack_inference_requests_in_flight",
        "gpurack_inference_requests_running",
        "gpurack_inference_requests_waiting",
    ]
    assert rules["gpurack_inference_queue_size"]["seriesQuery"] == (
        '{__name__="tgi_queue_size",namespace!="",pod!=""}'
    )
    # The adapter reads its rules only at start: new rules restart it.
    digest = "gpurack.io/config-digest"
    old = before[("Deployment", NAME)]["spec"]["template"]["metadata"]["annotations"][digest]
    new = after[("Deployment", NAME)]["spec"]["template"]["metadata"]["annotations"][digest]
    assert old != new


def test_one_metric_named_alike_by_two_runtimes_is_one_rule_over_both_series() -> None:
    runtimes = {
        "vllm": serving.RUNTIMES["vllm"],
        "other": Runtime(
            image="o:1", port=80, health_path="/", metrics={"requests_running": "other_running"}
        ),
    }
    rules = {rule["name"]["as"]: rule for rule in adapter.adapter_rules(runtimes)}
    assert rules["gpurack_inference_requests_running"] == {
        "seriesQuery": '{__name__=~"other_running|vllm:num_requests_running",namespace!="",pod!=""}',
        "resources": {"overrides": {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}},
        "name": {
            "matches": "^(other_running|vllm:num_requests_running)$",
            "as": "gpurack_inference_requests_running",
        },
        "metricsQuery": (
            'sum({__name__=~"other_running|vllm:num_requests_running",<<.LabelMatchers>>}) by (<<.GroupBy>>)'
        ),
    }
    assert len(rules) == 3


def test_the_adapter_runs_in_the_observability_namespace_with_its_rbac() -> None:
    objects = _objects()
    assert sorted(
        key
        for key, o in objects.items()
        if o["metadata"]["labels"].get("app.kubernetes.io/name") == ("prometheus-adapter")
    ) == [
        ("APIService", "v1beta1.custom.metrics.k8s.io"),
        ("APIService", "v1beta2.custom.metrics.k8s.io"),
        ("ClusterRole", NAME),
        ("ClusterRole", f"{NAME}-metrics-reader"),
        ("ClusterRoleBinding", NAME),
        ("ClusterRoleBinding", f"{NAME}-auth-delegator"),
        ("ClusterRoleBinding", f"{NAME}-hpa-controller"),
        ("ConfigMap", NAME),
        ("Deployment", NAME),
        ("RoleBinding", f"{NAME}-auth-reader"),
        ("Service", NAME),
        ("ServiceAccount", NAME),
    ]
    adapter_sa = [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}]
    # Delegated authentication and authorization of the API server's calls.
    delegator = objects[("ClusterRoleBinding", f"{NAME}-auth-delegator")]
    assert delegator["roleRef"]["name"] == "system:auth-delegator"
    assert delegator["subjects"] == adapter_sa
    reader = objects[("RoleBinding", f"{NAME}-auth-reader")]
    assert reader["metadata"]["namespace"] == "kube-system"
    assert reader["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "extension-apiserver-authentication-reader",
    }
    assert reader["subjects"] == adapter_sa
    # It reads the objects it serves metrics of, nothing more.
    assert objects[("ClusterRole", NAME)]["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["namespaces", "pods", "nodes", "services"],
            "verbs": ["get", "list", "watch"],
        }
    ]
    assert objects[("ClusterRoleBinding", NAME)]["subjects"] == adapter_sa
    # The HPA controller reads the custom metrics.
    hpa = objects[("ClusterRoleBinding", f"{NAME}-hpa-controller")]
    assert hpa["subjects"] == [
        {"kind": "ServiceAccount", "name": "horizontal-pod-autoscaler", "namespace": "kube-system"}
    ]
    assert objects[("ClusterRole", hpa["roleRef"]["name"])]["rules"] == [
        {"apiGroups": ["custom.metrics.k8s.io"], "resources": ["*"], "verbs": ["get", "list", "watch"]}
    ]


def test_the_api_server_reaches_the_adapter_through_its_apiservices() -> None:
    objects = _objects()
    service = objects[("Service", NAME)]
    assert service["metadata"]["namespace"] == NAMESPACE
    assert service["spec"]["ports"] == [{"name": "https", "port": 443, "targetPort": "https"}]
    pod = objects[("Deployment", NAME)]["spec"]["template"]
    assert service["spec"]["selector"] == pod["metadata"]["labels"]
    (container,) = pod["spec"]["containers"]
    assert container["ports"] == [{"name": "https", "containerPort": 6443}]
    for version, priority in (("v1beta1", 100), ("v1beta2", 200)):
        assert objects[("APIService", f"{version}.custom.metrics.k8s.io")]["spec"] == {
            "group": "custom.metrics.k8s.io",
            "version": version,
            "service": {"name": NAME, "namespace": NAMESPACE, "port": 443},
            # its certificate is the self-signed one it makes in --cert-dir
            "insecureSkipTLSVerify": True,
            "groupPriorityMinimum": 100,
            "versionPriority": priority,
        }


def test_the_adapter_queries_the_sites_prometheus_from_a_control_plane_node() -> None:
    objects = _objects(gpurack_metrics_adapter_image="mirror.example/prometheus-adapter:v0.12.0")
    deployment = objects[("Deployment", NAME)]
    assert deployment["spec"]["replicas"] == 1
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == NAME
    assert pod["nodeSelector"] == {"node-role.kubernetes.io/control-plane": ""}
    assert pod["tolerations"] == [
        {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert "hostNetwork" not in pod  # the API server holds 6443 on a control plane's own network
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 65532
    (container,) = pod["containers"]
    assert container["image"] == "mirror.example/prometheus-adapter:v0.12.0"
    assert container["args"] == [
        f"--prometheus-url={PROMETHEUS_URL}",
        "--config=/etc/adapter/config.yaml",
        "--metrics-relist-interval=1m",
        "--cert-dir=/var/run/serving-cert",
        "--secure-port=6443",
    ]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts == {"config": "/etc/adapter", "serving-cert": "/var/run/serving-cert", "tmp": "/tmp"}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["config"]["configMap"] == {"name": NAME}
    assert "emptyDir" in volumes["serving-cert"]


def test_the_image_is_upstreams_unless_the_inventory_names_one() -> None:
    (container,) = _objects()[("Deployment", NAME)]["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.k8s.io/prometheus-adapter/prometheus-adapter:v0.12.0"


def test_the_namespace_is_the_observability_sections_very_object() -> None:
    serving_site = site(gpurack_teams=_teams(), observability_namespace="metrics")
    namespaces = [o for o in build_objects(serving_site, ("inference",)) if o["kind"] == "Namespace"]
    assert namespaces == [
        o for o in build_objects(serving_site, ("observability",)) if o["kind"] == "Namespace"
    ]
    assert namespaces[0]["metadata"]["name"] == "metrics"


def test_no_service_no_adapter() -> None:
    assert build_objects(site(), ("inference",)) == []


def test_a_serving_site_without_a_prometheus_url_is_refused() -> None:
    with pytest.raises(PlatformInputError, match="gpurack_prometheus_url is not set"):
        site(gpurack_teams=_teams(), gpurack_prometheus_url=None)
    # A site that serves nothing needs none.
    assert site(gpurack_prometheus_url=None).prometheus_url == ""


@pytest.mark.parametrize(
    "url", ["prom:9090", "ftp://prom/", "http://", "http://prom:99999/", "http://a b/", 9090]
)
def test_a_bad_prometheus_url_is_refused(url: object) -> None:
    with pytest.raises(PlatformInputError, match="gpurack_prometheus_url must be an http:// or https:// URL"):
        site(gpurack_prometheus_url=url)


@pytest.mark.parametrize("image", ["", "a b", 3])
def test_a_bad_adapter_image_is_refused(image: object) -> None:
    with pytest.raises(PlatformInputError, match="gpurack_metrics_adapter_image must be an image reference"):
        site(gpurack_metrics_adapter_image=image)


def test_the_site_carries_the_url_and_image_through_its_dict() -> None:
    serving_site = site(gpurack_teams=_teams(), gpurack_metrics_adapter_image="m/pa:1")
    again = site_from_dict(serving_site.to_dict())
    assert (again.prometheus_url, again.metrics_adapter_image) == (PROMETHEUS_URL, "m/pa:1")
