# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""prometheus-adapter, which serves the inference services' HPAs their custom metrics
(custom.metrics.k8s.io) from Prometheus: its rules, made from the runtimes' own metrics
(serving.RUNTIMES), and the objects that run it in the observability namespace (docs/platform.md,
"Inference services").

It runs on a control-plane node, as a plain pod (not on the host network: the API server holds
port 6443 there), and queries Prometheus at site.prometheus_url (gpurack_prometheus_url). The
API server reaches it through the APIService; it makes its own self-signed serving certificate
(--cert-dir), so the APIService does not verify it (insecureSkipTLSVerify).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import PREFIX
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.common import metadata, obj
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import Site
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.scrape import namespace_object
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.serving import (
    RUNTIMES,
    Runtime,
    custom_metric_name,
)

NAME = "gpurack-prometheus-adapter"
LABELS = {"app.kubernetes.io/name": "prometheus-adapter", "app.kubernetes.io/component": "metrics-adapter"}
CUSTOM_METRICS_GROUP = "custom.metrics.k8s.io"
# The HPA controller asks for the newest version the API server lists; the adapter serves both.
API_VERSIONS = (("v1beta1", 100), ("v1beta2", 200))
# kube-controller-manager runs each controller under its own service account (kubeadm's
# --use-service-account-credentials): this one reads the HPAs' metrics. Kubernetes' own role for
# it may get and list them too; the binding is upstream's, explicit where that role was trimmed.
HPA_CONTROLLER = {"kind": "ServiceAccount", "name": "horizontal-pod-autoscaler", "namespace": "kube-system"}
CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
SECURE_PORT = 6443
CONFIG_DIR = "/etc/adapter"
CONFIG_KEY = "config.yaml"
CERT_DIR = "/var/run/serving-cert"
# How often the adapter lists Prometheus's series to learn which metrics exist (upstream's
# manifest says 1m): a runtime's first pod is served at most this long after Prometheus has it.
RELIST_INTERVAL = "1m"
# The user the adapter runs as, as the platform's other pods (upstream's image says 65534; any
# user works: it writes only to its emptyDirs).
ADAPTER_UID = 65532
# A rate rule's window: four of Prometheus's 15 s scrapes of the inference job.
RATE_WINDOW = "1m"
RBAC_API = "rbac.authorization.k8s.io"
_READ = ["get", "list", "watch"]


def adapter_rules(runtimes: Mapping[str, Runtime] | None = None) -> list[dict[str, Any]]:
    """One rule per custom metric the runtimes (default: RUNTIMES) serve, gpurack_inference_<metric>,
    by name: the series of each runtime that serves it, per pod, summed over its other labels."""
    series: dict[tuple[str, bool], set[str]] = {}
    for runtime in (RUNTIMES if runtimes is None else runtimes).values():
        for metric, runtime_metric in runtime.metrics.items():
            series.setdefault((metric, False), set()).add(runtime_metric)
        for metric, counter in runtime.rates.items():
            series.setdefault((metric, True), set()).add(counter)
    return [
        _rule(custom_metric_name(metric), sorted(names), rate)
        for (metric, rate), names in sorted(series.items())
    ]


def _rule(name: str, series: Sequence[str], rate: bool = False) -> dict[str, Any]:
    """A rule over one series, or over several when runtimes name the metric differently (then
    the query names them all: `<<.Series>>` would be one of them). Prometheus metric names hold
    only letters, digits, `_` and `:`, none of them special in a regular expression. A rate rule
    serves a counter's per-second rate over RATE_WINDOW."""
    if len(series) == 1:
        selector, pattern, query = f'__name__="{series[0]}"', series[0], "<<.Series>>{<<.LabelMatchers>>}"
    else:
        pattern = f"({'|'.join(series)})"
        selector = f'__name__=~"{"|".join(series)}"'
        query = f"{{{selector},<<.LabelMatchers>>}}"
    return {
        "seriesQuery": f'{{{selector},namespace!="",pod!=""}}',
        "resources": {"overrides": {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}},
        "name": {"matches": f"^{pattern}$", "as": name},
        "metricsQuery": f"sum(rate({query}[{RATE_WINDOW}])) by (<<.GroupBy>>)"
        if rate
        else f"sum({query}) by (<<.GroupBy>>)",
    }


def adapter_config(runtimes: Mapping[str, Runtime] | None = None) -> str:
    """The adapter's config file (JSON, which its YAML reader reads), the same text every time."""
    return json.dumps({"rules": adapter_rules(runtimes)}, indent=2) + "\n"


def metrics_adapter_objects(site: Site) -> list[dict[str, Any]]:
    """Its namespace, RBAC, rules, Deployment, Service and APIServices, in that order."""
    namespace = site.observability_namespace
    return [
        namespace_object(namespace),
        *_cluster_rbac(namespace),
        _auth_reader(namespace),
        obj("v1", "ServiceAccount", metadata(NAME, namespace, **LABELS)),
        _config_map(namespace),
        _deployment(site),
        _service(namespace),
        *(_api_service(namespace, version, priority) for version, priority in API_VERSIONS),
    ]


def _binding(name: str, kind: str, role: str, subject: dict[str, str]) -> dict[str, Any]:
    """A (Cluster)RoleBinding `name` of the ClusterRole or Role `role` to `subject`."""
    namespace = "kube-system" if kind == "RoleBinding" else None
    role_ref = {"apiGroup": RBAC_API, "kind": "Role" if namespace else "ClusterRole", "name": role}
    meta = metadata(name, namespace, **LABELS)
    return obj(f"{RBAC_API}/v1", kind, meta, roleRef=role_ref, subjects=[subject])


def _cluster_rbac(namespace: str) -> list[dict[str, Any]]:
    """The adapter reads the objects it serves metrics of and checks its callers with the API
    server (system:auth-delegator); the HPA controller may read the metrics."""
    adapter = {"kind": "ServiceAccount", "name": NAME, "namespace": namespace}
    reads = [{"apiGroups": [""], "resources": ["namespaces", "pods", "nodes", "services"], "verbs": _READ}]
    metrics = [{"apiGroups": [CUSTOM_METRICS_GROUP], "resources": ["*"], "verbs": _READ}]
    reader = f"{NAME}-metrics-reader"
    return [
        obj(f"{RBAC_API}/v1", "ClusterRole", metadata(NAME, **LABELS), rules=reads),
        obj(f"{RBAC_API}/v1", "ClusterRole", metadata(reader, **LABELS), rules=metrics),
        _binding(NAME, "ClusterRoleBinding", NAME, adapter),
        _binding(f"{NAME}-auth-delegator", "ClusterRoleBinding", "system:auth-delegator", adapter),
        _binding(f"{NAME}-hpa-controller", "ClusterRoleBinding", reader, HPA_CONTROLLER),
    ]


def _auth_reader(namespace: str) -> dict[str, Any]:
    """In kube-system: read the request-header CA the API server signs its proxied calls with."""
    adapter = {"kind": "ServiceAccount", "name": NAME, "namespace": namespace}
    return _binding(
        f"{NAME}-auth-reader", "RoleBinding", "extension-apiserver-authentication-reader", adapter
    )


def _config_map(namespace: str) -> dict[str, Any]:
    return obj("v1", "ConfigMap", metadata(NAME, namespace, **LABELS), data={CONFIG_KEY: adapter_config()})


def _deployment(site: Site) -> dict[str, Any]:
    """One replica on a control-plane node; the rules' digest in the pod template restarts it when
    they change (it reads them only at start)."""
    digest = hashlib.sha256(adapter_config().encode()).hexdigest()[:16]
    template = {
        "metadata": {"labels": dict(LABELS), "annotations": {f"{PREFIX}config-digest": digest}},
        "spec": {
            "serviceAccountName": NAME,
            "enableServiceLinks": False,
            "nodeSelector": {CONTROL_PLANE_LABEL: ""},
            "tolerations": [{"key": CONTROL_PLANE_LABEL, "operator": "Exists", "effect": "NoSchedule"}],
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": ADAPTER_UID,
                "runAsGroup": ADAPTER_UID,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [_container(site)],
            "volumes": [
                {"name": "config", "configMap": {"name": NAME}},
                {"name": "serving-cert", "emptyDir": {"sizeLimit": "16Mi"}},
                {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}},
            ],
        },
    }
    spec = {"replicas": 1, "selector": {"matchLabels": dict(LABELS)}, "template": template}
    return obj("apps/v1", "Deployment", metadata(NAME, site.observability_namespace, **LABELS), spec=spec)


def _container(site: Site) -> dict[str, Any]:
    probe: dict[str, Any] = {
        "httpGet": {"path": "/readyz", "port": "https", "scheme": "HTTPS"},
        "periodSeconds": 5,
    }
    return {
        "name": "prometheus-adapter",
        "image": site.metrics_adapter_image,
        "args": [
            f"--prometheus-url={site.prometheus_url}",
            f"--config={CONFIG_DIR}/{CONFIG_KEY}",
            f"--metrics-relist-interval={RELIST_INTERVAL}",
            f"--cert-dir={CERT_DIR}",
            f"--secure-port={SECURE_PORT}",
        ],
        "ports": [{"name": "https", "containerPort": SECURE_PORT}],
        "readinessProbe": probe,
        "livenessProbe": {
            **probe,
            "httpGet": {**probe["httpGet"], "path": "/livez"},
            "initialDelaySeconds": 30,
            "failureThreshold": 5,
        },
        "resources": {
            "requests": {"cpu": "100m", "memory": "128Mi"},
            "limits": {"cpu": "1", "memory": "512Mi"},
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [
            {"name": "config", "mountPath": CONFIG_DIR, "readOnly": True},
            {"name": "serving-cert", "mountPath": CERT_DIR},
            {"name": "tmp", "mountPath": "/tmp"},
        ],
    }


def _service(namespace: str) -> dict[str, Any]:
    spec = {"selector": dict(LABELS), "ports": [{"name": "https", "port": 443, "targetPort": "https"}]}
    return obj("v1", "Service", metadata(NAME, namespace, **LABELS), spec=spec)


def _api_service(namespace: str, version: str, priority: int) -> dict[str, Any]:
    """The custom metrics API at `version`, served by the adapter behind its Service; its
    certificate is self-signed, so not verified (docs/platform.md says what that allows)."""
    spec = {
        "group": CUSTOM_METRICS_GROUP,
        "version": version,
        "service": {"name": NAME, "namespace": namespace, "port": 443},
        "insecureSkipTLSVerify": True,
        "groupPriorityMinimum": 100,
        "versionPriority": priority,
    }
    meta = metadata(f"{version}.{CUSTOM_METRICS_GROUP}", **LABELS)
    return obj("apiregistration.k8s.io/v1", "APIService", meta, spec=spec)
