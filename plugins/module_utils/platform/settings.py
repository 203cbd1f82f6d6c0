# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The site-wide platform settings: gpurack_cohort, gpurack_quota_overcommit,
gpurack_object_store, gpurack_priority_classes, gpurack_prometheus_url,
gpurack_metrics_adapter_image and gpurack_dra_driver, each checked with a message naming it."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

from ansible_collections.gpurack.bootstrap.plugins.module_utils.names import (
    dns_label_error,
    dns_subdomain_error,
    label_key_error,
    label_value_error,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import (
    DEFAULT_DRA_DRIVER,
    DEFAULT_METRICS_ADAPTER_IMAGE,
    DEFAULT_PRIORITY_CLASSES,
    ObjectStore,
    PriorityClass,
)

_INT32_MAX = 2**31 - 1
_PORT_MAX = 65535
# How Ansible reads a boolean written as a string in inventory.
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def overcommit_from(raw: object) -> bool:
    """gpurack_quota_overcommit as a bool.

    Raises:
        ValueError: neither a boolean nor a string Ansible reads as one.
    """
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in (*_TRUE, *_FALSE):
        return raw.strip().lower() in _TRUE
    raise ValueError(f"gpurack_quota_overcommit must be true or false, got {raw!r}")


# What the tenancy NetworkPolicy reads of gpurack_object_store, and what only the object_store
# role reads (roles/object_store: the URLs, region, admin credentials' Secret).
_STORE_KEYS = {"cidrs", "port", "namespace", "pod_labels", "teams"}
_STORE_ROLE_KEYS = {"endpoint", "admin_endpoint", "region", "admin_secret"}


def object_store_from(raw: object) -> ObjectStore | None:
    """gpurack_object_store or None when unset: `port` and `cidrs` (networks) and/or `namespace`
    (+ `pod_labels`) of an in-cluster store; `teams` limits which teams may reach it.

    Raises:
        ValueError: a CIDR that is not a network, a port outside 1-65535, neither cidrs nor a
            namespace, or a key gpurack does not know.
    """
    if raw is None or raw == {}:
        return None
    if not isinstance(raw, Mapping) or set(raw) - _STORE_KEYS - _STORE_ROLE_KEYS:
        known = ", ".join(sorted(_STORE_KEYS | _STORE_ROLE_KEYS))
        raise ValueError(f"gpurack_object_store must be a mapping of {known}, got {raw!r}")
    namespace = raw.get("namespace")
    if namespace is not None and (err := dns_label_error("gpurack_object_store.namespace", namespace, "s3")):
        raise ValueError(err)
    labels = _pod_labels(raw.get("pod_labels") or {})
    teams = raw.get("teams")
    if teams is not None and (not isinstance(teams, list) or not all(isinstance(t, str) for t in teams)):
        raise ValueError(f"gpurack_object_store.teams must be a list of team names, got {teams!r}")
    cidrs = raw.get("cidrs", [] if namespace else None)
    if not isinstance(cidrs, list) or not (cidrs or namespace):
        raise ValueError(
            "gpurack_object_store.cidrs must be a non-empty list of networks (e.g. 10.0.0.0/24),"
            " unless namespace names an in-cluster store"
        )
    networks = []
    for cidr in cidrs:
        try:
            networks.append(str(ipaddress.ip_network(str(cidr), strict=False)))
        except ValueError as exc:
            raise ValueError(f"gpurack_object_store.cidrs: {cidr!r} is not a network: {exc}") from None
    port = raw.get("port")
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= _PORT_MAX:
        raise ValueError(f"gpurack_object_store.port must be a port from 1 to {_PORT_MAX}, got {port!r}")
    return ObjectStore(
        cidrs=tuple(networks),
        port=port,
        namespace=namespace,
        pod_labels=tuple(sorted(labels.items())),
        teams=None if teams is None else tuple(teams),
    )


def _pod_labels(labels: object) -> Mapping[str, str]:
    """gpurack_object_store.pod_labels: they land in the tenancy NetworkPolicy's podSelector, so
    each key is a label key and each value a label value (Kubernetes' own prefixes allowed: a
    selector matches the store's labels, such as app.kubernetes.io/name)."""
    where = "gpurack_object_store.pod_labels"
    if not isinstance(labels, Mapping):
        raise ValueError(f"{where} must be a mapping of label to string, got {labels!r}")
    for key, value in labels.items():
        if err := label_key_error(where, key) or label_value_error(f"{where}[{key!r}]", value):
            raise ValueError(err)
    return labels


def priority_classes_from(raw: object) -> tuple[PriorityClass, ...]:
    """gpurack_priority_classes, or the defaults when unset.

    Raises:
        ValueError: an entry without a DNS-subdomain name or an int32 value, or a name twice.
    """
    if raw is None:
        return DEFAULT_PRIORITY_CLASSES
    if not isinstance(raw, list) or not raw:
        raise ValueError("gpurack_priority_classes must be a non-empty list of {name, value, description}")
    classes: list[PriorityClass] = []
    for index, entry in enumerate(raw):
        where = f"gpurack_priority_classes[{index}]"
        if not isinstance(entry, Mapping) or set(entry) - {"name", "value", "description"}:
            raise ValueError(f"{where} must be a mapping of name, value and description, got {entry!r}")
        # The name is a WorkloadPriorityClass's and the value of jobs' priority-class label.
        name = entry.get("name")
        err = dns_subdomain_error(f"{where}.name", name, "training")
        if err := err or label_value_error(f"{where}.name", name):
            raise ValueError(err)
        value = entry.get("value")
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) > _INT32_MAX:
            raise ValueError(f"{where}.value must be a 32-bit integer, got {value!r}")
        if any(c.name == entry["name"] for c in classes):
            raise ValueError(f"{where}: duplicate priority class {entry['name']!r}")
        classes.append(PriorityClass(str(entry["name"]), value, str(entry.get("description") or "")))
    return tuple(sorted(classes, key=lambda c: (-c.value, c.name)))


def prometheus_url_from(raw: object) -> str:
    """gpurack_prometheus_url, where the cluster's pods reach Prometheus; "" when unset.

    Raises:
        ValueError: not an http:// or https:// URL naming a host (and a port from 1 to 65535).
    """
    if raw is None or raw == "":
        return ""
    example = "http://192.0.2.11:9090/"
    problem = f"gpurack_prometheus_url must be an http:// or https:// URL, like {example}, got {raw!r}"
    if not isinstance(raw, str) or any(c.isspace() for c in raw):
        raise ValueError(problem)
    try:
        parsed = urlsplit(raw)
        port = parsed.port
    except ValueError:
        raise ValueError(problem) from None
    if parsed.scheme not in ("http", "https") or not parsed.hostname or port == 0:
        raise ValueError(problem)
    return raw


def metrics_adapter_image_from(raw: object) -> str:
    """gpurack_metrics_adapter_image, or prometheus-adapter's upstream image when unset.

    Raises:
        ValueError: not a non-empty image reference without spaces.
    """
    if raw is None:
        return DEFAULT_METRICS_ADAPTER_IMAGE
    if not isinstance(raw, str) or not raw or any(c.isspace() for c in raw):
        raise ValueError(
            f"gpurack_metrics_adapter_image must be an image reference like {DEFAULT_METRICS_ADAPTER_IMAGE}, "
            f"got {raw!r}"
        )
    return raw


def dra_driver_from(raw: object) -> str:
    """gpurack_dra_driver, the driver a dra pool's DeviceClass selects; NVIDIA's when unset.

    Raises:
        ValueError: not a DNS subdomain (a DRA driver's name is one, e.g. gpu.nvidia.com).
    """
    if raw is None or raw == "":
        return DEFAULT_DRA_DRIVER
    if err := dns_subdomain_error("gpurack_dra_driver", raw, DEFAULT_DRA_DRIVER):
        raise ValueError(err)
    return str(raw)
