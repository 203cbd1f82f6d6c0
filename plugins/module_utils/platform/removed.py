# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The objects gpurack made for a team that the inventory no longer names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.common import (
    MANAGED_BY,
    TEAM_LABEL,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.inference import SERVICE_LABEL

# What gpurack makes for each inference service, deleted together when the service is removed.
SERVICE_KINDS = (
    ("autoscaling/v2", "HorizontalPodAutoscaler"),
    ("policy/v1", "PodDisruptionBudget"),
    ("v1", "Service"),
    ("apps/v1", "Deployment"),
)


def removed_team_objects(objects: Iterable[Mapping[str, Any]], teams: Iterable[str]) -> list[dict[str, str]]:
    """Each of `objects` that gpurack labelled for a team not in `teams`, as {api_version, kind,
    name, team}, in the order given (objects without gpurack's labels are left out)."""
    keep = set(teams)
    found = []
    for item in objects:
        meta = item.get("metadata") or {}
        labels = meta.get("labels") or {}
        team = labels.get(TEAM_LABEL)
        ours = all(labels.get(key) == value for key, value in MANAGED_BY.items())
        if ours and team and team not in keep:
            found.append(
                {
                    "api_version": str(item.get("apiVersion")),
                    "kind": str(item.get("kind")),
                    "name": str(meta.get("name")),
                    "team": str(team),
                }
            )
    return found


def removed_services(
    objects: Iterable[Mapping[str, Any]], declared: Iterable[tuple[str, str]]
) -> list[dict[str, str]]:
    """Each inference service gpurack made (labelled objects in `objects`, e.g. its Deployments)
    that is not one of the `declared` (team, service) pairs, as {api_version, kind, namespace,
    name, team}: every kind gpurack makes for it, autoscaler first and Deployment last."""
    keep = set(declared)
    gone: set[tuple[str, str]] = set()
    for item in objects:
        meta = item.get("metadata") or {}
        labels = meta.get("labels") or {}
        ours = all(labels.get(key) == value for key, value in MANAGED_BY.items())
        service, namespace = labels.get(SERVICE_LABEL), meta.get("namespace")
        if ours and service and namespace and (namespace, service) not in keep:
            gone.add((str(namespace), str(service)))
    return [
        {"api_version": api, "kind": kind, "namespace": namespace, "name": name, "team": namespace}
        for namespace, name in sorted(gone)
        for api, kind in SERVICE_KINDS
    ]
