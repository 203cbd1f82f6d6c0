# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Prometheus on the control plane, from inventory: its scrape config and its cluster identity (pure).

The scrape jobs (docs/platform.md, "Metrics and the Node condition"):

- `node`: the node exporter of every GPU node (its textfile collector serves gpurack.prom),
  with `node` and `pool` target labels; `honor_labels` keeps the textfile's own `node` and
  `pool` rather than renaming them `exported_*`;
- `kubelet`: every node's kubelet, https on 10250 with the service account token. kubeadm's
  kubelet serves a self-signed certificate unless `serverTLSBootstrap` is on, so the lab skips
  verification (a variable); a real site verifies against the cluster CA;
- `kueue`: Kueue's metrics Service (kueue-system, 8443, https) on its ClusterIP, which the
  control-plane host reaches through kube-proxy; the role reads the ClusterIP from the API.
  Debian's Prometheus 2.42 is built without Kubernetes service discovery
  (`kubernetes_sd_configs` is unknown to it), hence a static target. Kueue's certificate is its
  own (self-signed without cert-manager), so verification is a choice as for the kubelets;
- `inference`: the model servers behind each inference Service, every pod on its own address
  (the HPA's metric is per pod), found through HTTP service discovery that a helper beside
  Prometheus answers from the Services' EndpointSlices (roles/observability/files/
  gpurack-scrape-targets.py), with `namespace`, `service`, `pod` and `node` labels;
- `prometheus`: itself.

`prometheus_rbac` is the service account whose token Prometheus uses: `nodes/metrics` for the
kubelets, the non-resource URL `/metrics` for Kueue, and listing EndpointSlices for the helper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.common import MANAGED_BY
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import KUEUE_NAMESPACE

SA_NAME = "gpurack-prometheus"
TOKEN_SECRET = f"{SA_NAME}-token"


@dataclass(frozen=True)
class Target:
    """A host Prometheus scrapes: its Node name, the address it is reached on, its pool name."""

    node: str
    address: str
    pool: str = ""


@dataclass(frozen=True)
class ScrapeOptions:
    """Ports, credentials and TLS choices of the scrape config (the role's variables)."""

    token_file: str
    scrape_interval: str = "30s"
    node_exporter_port: int = 9100
    kubelet_port: int = 10250
    kubelet_ca_file: str = "/etc/kubernetes/pki/ca.crt"
    kubelet_insecure_skip_verify: bool = False
    kueue_address: str = ""
    kueue_port: int = 8443
    kueue_namespace: str = KUEUE_NAMESPACE
    kueue_service: str = "kueue-controller-manager-metrics-service"
    kueue_ca_file: str = ""
    kueue_insecure_skip_verify: bool = False
    prometheus_port: int = 9090
    inference_sd_url: str = ""  # the helper's URL; "" scrapes no inference pods


def _host_port(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def _tls(ca_file: str, insecure: bool, server_name: str = "") -> dict[str, Any]:
    if insecure:
        return {"insecure_skip_verify": True}
    tls: dict[str, Any] = {"ca_file": ca_file} if ca_file else {}
    if server_name:
        tls["server_name"] = server_name
    return tls


def _static(targets: Sequence[Target], port: int, with_pool: bool) -> list[dict[str, Any]]:
    """One static config per target, so each carries its own node (and pool) label."""
    configs = []
    for target in sorted(targets, key=lambda t: t.node):
        labels = {"node": target.node, **({"pool": target.pool} if with_pool else {})}
        configs.append({"targets": [_host_port(target.address, port)], "labels": labels})
    return configs


def _kueue_job(o: ScrapeOptions, auth: dict[str, Any]) -> dict[str, Any]:
    server_name = f"{o.kueue_service}.{o.kueue_namespace}.svc"
    return {
        "job_name": "kueue",
        "scheme": "https",
        "authorization": dict(auth),
        "tls_config": _tls(o.kueue_ca_file, o.kueue_insecure_skip_verify, server_name),
        "static_configs": [
            {
                "targets": [_host_port(o.kueue_address, o.kueue_port)],
                "labels": {"namespace": o.kueue_namespace, "service": o.kueue_service},
            }
        ],
    }


def scrape_config(
    node_exporters: Sequence[Target], kubelets: Sequence[Target], options: ScrapeOptions
) -> dict[str, Any]:
    """The whole prometheus.yml as a mapping, jobs and targets in a fixed order.

    The kueue job is there when `options.kueue_address` (the Service's ClusterIP) is known.
    """
    o = options
    auth = {"type": "Bearer", "credentials_file": o.token_file}
    jobs: list[dict[str, Any]] = [
        {"job_name": "prometheus", "static_configs": [{"targets": [f"localhost:{o.prometheus_port}"]}]},
        {
            "job_name": "node",
            "honor_labels": True,
            "static_configs": _static(node_exporters, o.node_exporter_port, with_pool=True),
        },
        {
            "job_name": "kubelet",
            "scheme": "https",
            "authorization": dict(auth),
            "tls_config": _tls(o.kubelet_ca_file, o.kubelet_insecure_skip_verify),
            "static_configs": _static(kubelets, o.kubelet_port, with_pool=False),
        },
    ]
    if o.kueue_address:
        jobs.append(_kueue_job(o, auth))
    if o.inference_sd_url:
        # Prometheus joins the target's port to it; the runtime serves /metrics on its http port.
        jobs.append(
            {
                "job_name": "inference",
                "http_sd_configs": [{"url": o.inference_sd_url, "refresh_interval": "15s"}],
            }
        )
    return {
        "global": {"scrape_interval": o.scrape_interval, "evaluation_interval": o.scrape_interval},
        "scrape_configs": jobs,
    }


def targets_from_hostvars(hostvars: Mapping[str, Mapping[str, Any]], hosts: Sequence[str]) -> list[Target]:
    """A Target per inventory host: Node name = inventory name, address = ansible_host, pool name."""
    targets = []
    for host in dict.fromkeys(hosts):
        hv = hostvars.get(host) or {}
        pool = hv.get("gpurack_pool")
        name = pool.get("name") if isinstance(pool, Mapping) else None
        targets.append(Target(node=host, address=str(hv.get("ansible_host") or host), pool=str(name or "")))
    return targets


def namespace_object(namespace: str) -> dict[str, Any]:
    """The observability namespace; prometheus-adapter (inference section) applies the same object."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": namespace, "labels": dict(MANAGED_BY)},
    }


def prometheus_rbac(namespace: str) -> list[dict[str, Any]]:
    """Namespace, ServiceAccount, its long-lived token Secret, ClusterRole and binding, in apply order."""
    meta = {"name": SA_NAME, "labels": dict(MANAGED_BY)}
    return [
        namespace_object(namespace),
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {**meta, "namespace": namespace}},
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/service-account-token",
            "metadata": {
                "name": TOKEN_SECRET,
                "namespace": namespace,
                "labels": meta["labels"],
                "annotations": {"kubernetes.io/service-account.name": SA_NAME},
            },
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": meta,
            "rules": [
                {"apiGroups": [""], "resources": ["nodes/metrics"], "verbs": ["get"]},
                {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
                {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": SA_NAME},
            "subjects": [{"kind": "ServiceAccount", "name": SA_NAME, "namespace": namespace}],
        },
    ]
