# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The observability section: Prometheus's namespace, service account, token and read-only RBAC."""

from __future__ import annotations

from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import Site
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.scrape import prometheus_rbac


def observability_objects(site: Site) -> list[dict[str, Any]]:
    """The objects that let Prometheus scrape the kubelets and Kueue, in site.observability_namespace."""
    return prometheus_rbac(site.observability_namespace)
