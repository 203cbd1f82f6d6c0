# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Observability filters: prometheus_scrape_config, prometheus_rbac (docs: sidecar .yml files)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.module_utils import platform as _platform


def prometheus_scrape_config(
    hostvars: Mapping[str, Mapping[str, Any]],
    node_exporter_hosts: Sequence[str],
    kubelet_hosts: Sequence[str],
    options: Mapping[str, Any],
) -> dict[str, Any]:
    """prometheus.yml for the node exporters, the kubelets and Kueue, from inventory."""
    known = {f.name for f in fields(_platform.ScrapeOptions)}
    if unknown := sorted(set(options) - known):
        raise AnsibleFilterError(
            f"prometheus_scrape_config: unknown options {', '.join(unknown)} "
            f"(known: {', '.join(sorted(known))})"
        )
    if not options.get("token_file"):
        raise AnsibleFilterError("prometheus_scrape_config: options.token_file is required")
    return _platform.scrape_config(
        _platform.targets_from_hostvars(hostvars, node_exporter_hosts),
        _platform.targets_from_hostvars(hostvars, kubelet_hosts),
        _platform.ScrapeOptions(**options),
    )


def prometheus_rbac(namespace: str) -> list[dict[str, Any]]:
    """The service account Prometheus scrapes with, its token Secret and its cluster role."""
    return _platform.prometheus_rbac(namespace)


class FilterModule:
    """gpurack.bootstrap observability filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"prometheus_scrape_config": prometheus_scrape_config, "prometheus_rbac": prometheus_rbac}
