"""Observability filters: the scrape config from inventory and Prometheus's cluster identity."""

from __future__ import annotations

from typing import Any

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.filter.observability import (
    FilterModule,
    prometheus_rbac,
    prometheus_scrape_config,
)

HOSTVARS: dict[str, dict[str, Any]] = {
    "cp1": {"ansible_host": "10.0.0.10"},
    "gpu02": {"ansible_host": "10.0.0.12", "gpurack_pool": {"name": "h100-train-a"}},
    "gpu01": {"ansible_host": "10.0.0.11", "gpurack_pool": {"name": "h200-infer"}},
    "gpu03": {"ansible_host": "fd00::13", "gpurack_pool": {"name": "h100-train-a"}},
    "bare": {},
}
TOKEN = "/etc/prometheus/gpurack-token"


def jobs(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {job["job_name"]: job for job in config["scrape_configs"]}


def test_filter_module_maps_names_to_functions() -> None:
    assert FilterModule().filters() == {
        "prometheus_scrape_config": prometheus_scrape_config,
        "prometheus_rbac": prometheus_rbac,
    }


def test_node_exporters_of_every_gpu_node_with_node_and_pool_labels() -> None:
    config = prometheus_scrape_config(
        HOSTVARS, ["gpu02", "gpu01", "gpu03", "bare"], [], {"token_file": TOKEN}
    )
    node = jobs(config)["node"]
    assert node["honor_labels"] is True
    assert node["static_configs"] == [
        {"targets": ["bare:9100"], "labels": {"node": "bare", "pool": ""}},
        {"targets": ["10.0.0.11:9100"], "labels": {"node": "gpu01", "pool": "h200-infer"}},
        {"targets": ["10.0.0.12:9100"], "labels": {"node": "gpu02", "pool": "h100-train-a"}},
        {"targets": ["[fd00::13]:9100"], "labels": {"node": "gpu03", "pool": "h100-train-a"}},
    ]


def test_kubelets_over_https_with_the_token_verified_by_default() -> None:
    config = prometheus_scrape_config(HOSTVARS, [], ["cp1", "gpu01", "cp1"], {"token_file": TOKEN})
    kubelet = jobs(config)["kubelet"]
    assert kubelet["scheme"] == "https"
    assert kubelet["authorization"] == {"type": "Bearer", "credentials_file": TOKEN}
    assert kubelet["tls_config"] == {"ca_file": "/etc/kubernetes/pki/ca.crt"}
    assert [c["targets"] for c in kubelet["static_configs"]] == [["10.0.0.10:10250"], ["10.0.0.11:10250"]]
    lab = prometheus_scrape_config(
        HOSTVARS, [], ["cp1"], {"token_file": TOKEN, "kubelet_insecure_skip_verify": True}
    )
    assert jobs(lab)["kubelet"]["tls_config"] == {"insecure_skip_verify": True}


def test_kueue_job_only_with_its_service_address() -> None:
    without = prometheus_scrape_config(HOSTVARS, [], [], {"token_file": TOKEN})
    assert sorted(jobs(without)) == ["kubelet", "node", "prometheus"]
    config = prometheus_scrape_config(HOSTVARS, [], [], {"token_file": TOKEN, "kueue_address": "10.96.4.20"})
    kueue = jobs(config)["kueue"]
    assert kueue["scheme"] == "https"
    assert kueue["static_configs"][0]["targets"] == ["10.96.4.20:8443"]
    assert kueue["tls_config"] == {"server_name": "kueue-controller-manager-metrics-service.kueue-system.svc"}
    assert kueue["authorization"]["credentials_file"] == TOKEN
    # No shared objects: to_nice_yaml would write them as YAML anchors.
    assert kueue["authorization"] is not jobs(config)["kubelet"]["authorization"]


def test_inference_pods_through_the_helpers_http_discovery() -> None:
    url = "http://127.0.0.1:9095/"
    config = prometheus_scrape_config(HOSTVARS, [], [], {"token_file": TOKEN, "inference_sd_url": url})
    assert jobs(config)["inference"] == {
        "job_name": "inference",
        "http_sd_configs": [{"url": url, "refresh_interval": "15s"}],
    }


def test_scrape_config_has_no_kubernetes_service_discovery() -> None:
    # Debian's Prometheus 2.42 is built without it: promtool refuses kubernetes_sd_configs.
    config = prometheus_scrape_config(
        HOSTVARS, ["gpu01"], ["cp1"], {"token_file": TOKEN, "kueue_address": "x"}
    )
    assert all("kubernetes_sd_configs" not in job for job in config["scrape_configs"])
    assert config["global"] == {"scrape_interval": "30s", "evaluation_interval": "30s"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"token_file": TOKEN, "api_server": "x"}, "unknown options api_server"),
        ({}, "options.token_file is required"),
    ],
)
def test_bad_options_raise_filter_error(options: dict[str, Any], message: str) -> None:
    with pytest.raises(AnsibleFilterError, match=message):
        prometheus_scrape_config(HOSTVARS, [], [], options)


def test_rbac_is_a_token_for_metrics_only() -> None:
    objects = prometheus_rbac("gpurack-observability")
    assert [o["kind"] for o in objects] == [
        "Namespace",
        "ServiceAccount",
        "Secret",
        "ClusterRole",
        "ClusterRoleBinding",
    ]
    secret = objects[2]
    assert secret["type"] == "kubernetes.io/service-account-token"
    assert secret["metadata"]["annotations"] == {"kubernetes.io/service-account.name": "gpurack-prometheus"}
    assert objects[3]["rules"] == [
        {"apiGroups": [""], "resources": ["nodes/metrics"], "verbs": ["get"]},
        {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
        # The inference targets helper lists the inference Services' EndpointSlices.
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list"]},
    ]
    assert objects[4]["subjects"] == [
        {"kind": "ServiceAccount", "name": "gpurack-prometheus", "namespace": "gpurack-observability"}
    ]
