# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What every platform object shares: the managed-by label and the metadata shape."""

from __future__ import annotations

from typing import Any

MANAGED_BY = {"app.kubernetes.io/managed-by": "gpurack"}
TEAM_LABEL = "gpurack.io/team"
GPU_RESOURCE = "nvidia.com/gpu"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def metadata(name: str, namespace: str | None = None, **labels: str) -> dict[str, Any]:
    """An object's metadata: name, namespace when namespaced, and the gpurack labels."""
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {**MANAGED_BY, **dict(sorted(labels.items()))}
    return meta


def team_labels(team: str) -> dict[str, str]:
    return {TEAM_LABEL: team}


def obj(api_version: str, kind: str, meta: dict[str, Any], **body: Any) -> dict[str, Any]:
    """A Kubernetes object with its fields in the usual order (apiVersion, kind, metadata, ...)."""
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **body}


def toleration(taint: Any) -> dict[str, str]:
    """The toleration of a pool's taint ({key, value, effect}): Equal with a value, else Exists."""
    if taint["value"]:
        return {"key": taint["key"], "operator": "Equal", "value": taint["value"], "effect": taint["effect"]}
    return {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
