# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Kubernetes name filters: node_name_errors (docs: sidecar .yml file)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.names import node_name_error


def node_name_errors(name: Any, where: str = "the Node's name") -> list[str]:
    """Why `name` cannot be a Kubernetes Node's name (a DNS subdomain), as a list; [] when it can."""
    error = node_name_error(where, name)
    return [] if error is None else [error]


class FilterModule:
    """gpurack.bootstrap Kubernetes name filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"node_name_errors": node_name_errors}
