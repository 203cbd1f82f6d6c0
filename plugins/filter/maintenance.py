# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Day 2 filters: maintenance_problems, patch_batches (docs: sidecar .yml files)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.module_utils import node as _node


def maintenance_problems(node: Mapping[str, Any] | None) -> list[str]:
    """Why the Node may not be taken out of service; [] when it may."""
    return _node.maintenance_problems(node)


def patch_batches(
    hostvars: Mapping[str, Mapping[str, Any]],
    hosts: Sequence[str],
    serial: object,
    pools: Sequence[str] | str | None = (),
    limit: Sequence[str] | None = None,
) -> list[list[str]]:
    """The rolling patch's batches of `hosts` (the chosen `pools`, or all), pool floors kept.

    `pools` may be a list or one string of names separated by commas or new lines (an AWX
    survey's text answer). `limit` (the play's hosts under --limit) patches only those, while
    the pools' sizes still count every host in `hosts`.
    """
    chosen = re.split(r"[,\s]+", pools) if isinstance(pools, str) else list(pools or [])
    try:
        return _node.patch_order(
            _node.pools_of(hostvars, hosts, [p for p in chosen if p], only=limit), serial
        )
    except _node.PlanError as exc:
        raise AnsibleFilterError(f"patch_batches: {exc}") from None


class FilterModule:
    """gpurack.bootstrap day 2 filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"maintenance_problems": maintenance_problems, "patch_batches": patch_batches}
