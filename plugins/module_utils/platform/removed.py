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
