# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Bring one Node's gpurack metadata to the desired state: plan, patch with the resourceVersion it
was planned on, and on a 409 Conflict read it again and re-plan (stdlib only; the API calls are
the caller's)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.node.metadata import (
    NodeMetadata,
    Plan,
    metadata_from_node,
    node_metadata,
    plan,
)

Node = dict[str, Any]


class ConflictError(Exception):
    """Every patch met a 409 Conflict: the Node kept changing between our read and our patch."""

    def __init__(self, attempts: int) -> None:
        super().__init__(f"it changed under us (409 Conflict) {attempts} times in a row")
        self.attempts = attempts


@dataclass(frozen=True, slots=True)
class Desired:
    """What gpurack wants on one Node (the options of k8s_node_metadata)."""

    labels: Mapping[str, str | None] = field(default_factory=dict)
    taints: list[Mapping[str, Any]] = field(default_factory=list)
    validation: str = "unknown"
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Synced:
    """The plan that was applied (or, in check mode, would be), the metadata after it, the Node as
    last read, and how many patches were sent (conflicts included)."""

    steps: Plan
    after: NodeMetadata
    node: Node
    patches: int


def patch_body(steps: Plan, node: Mapping[str, Any]) -> dict[str, Any]:
    """The plan's patch, carrying the resourceVersion of the Node it was planned on."""
    # A dict is sent as a strategic merge patch; Node spec.taints has no patch strategy, so the
    # plan's full list replaces the old one. metadata.resourceVersion makes the API server refuse
    # (409) a patch planned on a Node that changed since we read it: the node lifecycle
    # controller edits taints too.
    body = dict(steps.patch)
    body["metadata"] = {
        **steps.patch.get("metadata", {}),
        "resourceVersion": node["metadata"]["resourceVersion"],
    }
    return body


def sync_metadata(
    node: Node | None,
    desired: Desired,
    read: Callable[[], Node],
    patch: Callable[[dict[str, Any]], Node | None],
    *,
    check_mode: bool = False,
    retries: int = 5,
) -> Synced:
    """Plan the Node (`node` as already read, else `read()`), and patch it unless it is as desired
    or `check_mode`; `patch` returns the patched Node, or None on a 409 Conflict, after which the
    Node is read again and re-planned, up to `retries` times.

    Raises:
        ConflictError: the last of the 1 + `retries` patches met a conflict too.
        ValueError: the desired labels, taints or validation are invalid (see `plan`).
    """
    attempts = max(retries, 0) + 1
    for attempt in range(attempts):
        # Each earlier attempt sent a patch that met a conflict.
        current = read() if node is None or attempt else node
        steps = plan(
            metadata_from_node(current), desired.labels, desired.taints, desired.validation, desired.reason
        )
        if not steps.changed or check_mode:
            return Synced(steps, steps.result, current, attempt)
        patched = patch(patch_body(steps, current))
        if patched is not None:
            return Synced(steps, node_metadata(metadata_from_node(patched)), current, attempt + 1)
    raise ConflictError(attempts)
