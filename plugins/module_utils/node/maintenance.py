# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Day 2 maintenance, pure (stdlib only; the filters `maintenance_problems` and `patch_order`):

- whether a Node may be taken out of service: Ready, its last validation passed, and not
  cordoned by someone else; a Node gpurack itself cordoned (its `gpurack.io/maintenance`
  annotation is there) is always taken, so a re-run resumes it;
- the order and batches of a rolling patch: the nodes of the chosen pools, in batches of
  `serial` (a number or a share such as "20%", as Ansible's play keyword), interleaving the
  pools so that no batch takes a pool below its `min_available` nodes in service. A plan that
  cannot keep a floor is refused before any node is touched.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAINTENANCE_ANNOTATION = "gpurack.io/maintenance"
VALIDATING_TAINT = "gpurack.io/validating"
VALIDATION_FAILED_ANNOTATION = "gpurack.io/validation-failed"
VALIDATED_CONDITION = "GpurackValidated"
_SERIAL = re.compile(r"^\s*([0-9]+)\s*(%?)\s*$")
_MAX_DIGITS = 9  # a batch of a billion nodes is already more than any rack has


class PlanError(ValueError):
    """The rollout cannot be planned (one line, naming the pool or the value)."""


def _conditions(node: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    found = (node.get("status") or {}).get("conditions") or []
    return {str(c.get("type")): c for c in found if isinstance(c, Mapping)}


def maintenance_problems(node: Mapping[str, Any] | None) -> list[str]:
    """Why `node` (a Node as the API returns it) may not be taken out of service; [] when it may."""
    if not node:
        return ["it is not in the cluster"]
    meta = node.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    if MAINTENANCE_ANNOTATION in annotations:
        return []  # gpurack took it out earlier: resume it
    problems = []
    if (node.get("spec") or {}).get("unschedulable"):
        problems.append(f"it is cordoned by someone else (no {MAINTENANCE_ANNOTATION} annotation)")
    conditions = _conditions(node)
    ready = conditions.get("Ready") or {}
    if ready.get("status") != "True":
        why = ready.get("message") or ready.get("reason") or "no Ready condition"
        problems.append(f"it is not Ready ({why})")
    taints = (node.get("spec") or {}).get("taints") or []
    validated = conditions.get(VALIDATED_CONDITION) or {}
    if any(t.get("key") == VALIDATING_TAINT for t in taints if isinstance(t, Mapping)):
        why = annotations.get(VALIDATION_FAILED_ANNOTATION) or "not validated yet"
        problems.append(f"its last validation did not pass ({why})")
    elif validated.get("status") == "False":
        problems.append(f"its last validation did not pass ({validated.get('message') or 'ChecksFailed'})")
    return problems


def batch_size(serial: object, total: int) -> int:
    """How many of `total` nodes one batch holds: a whole number, or a share ("20%", at least 1).

    Raises:
        PlanError: neither, or zero.
    """
    match = _SERIAL.match(
        serial if isinstance(serial, str) else str(serial) if isinstance(serial, int) else ""
    )
    if match is None or isinstance(serial, bool) or len(match.group(1)) > _MAX_DIGITS:
        raise PlanError(f"serial must be a whole number or a share such as 20%, got {str(serial)[:40]!r}")
    value = int(match.group(1))
    size = max(math.floor(total * value / 100), 1) if match.group(2) else value
    if size < 1:
        raise PlanError(f"serial must be at least 1, got {serial!r}")
    return size


@dataclass(frozen=True, slots=True)
class Pool:
    """One pool's nodes to patch and how many of its nodes must stay in service."""

    name: str
    hosts: tuple[str, ...]
    size: int  # all of its nodes, patched or not
    min_available: int

    @property
    def may_be_out(self) -> int:
        return self.size - self.min_available


def pools_of(
    hostvars: Mapping[str, Mapping[str, Any]],
    hosts: Sequence[str],
    chosen: Sequence[str] = (),
    only: Sequence[str] | None = None,
) -> list[Pool]:
    """The pools of `hosts` (by `gpurack_pool.name`), each with the hosts to patch: those of the
    `chosen` pools, or every pool when none is chosen, and of those only the hosts in `only`
    when it is given. A pool's size counts all its hosts, so a limit never lowers its floor.

    Raises:
        PlanError: a host without a pool, a chosen pool no host has, or a bad min_available.
    """
    members: dict[str, list[str]] = {}
    floors: dict[str, int] = {}
    for host in hosts:
        pool = (hostvars.get(host) or {}).get("gpurack_pool") or {}
        name = pool.get("name") if isinstance(pool, Mapping) else None
        if not name:
            raise PlanError(f"{host} has no gpurack_pool.name: every node to patch needs its pool")
        if not isinstance(name, str):
            raise PlanError(f"{host}: gpurack_pool.name must be text, got {name!r}")
        floor = pool.get("min_available", 0)
        if isinstance(floor, bool) or not isinstance(floor, int) or floor < 0:
            raise PlanError(f"pool {name}: min_available must be a whole number of at least 0, got {floor!r}")
        members.setdefault(str(name), []).append(host)
        floors[str(name)] = max(floors.get(str(name), 0), floor)
    odd = [p for p in chosen if not isinstance(p, str)]
    if odd:
        raise PlanError(f"the pools to patch must be names (text), got {odd[0]!r}")
    unknown = sorted(set(chosen) - set(members))
    if unknown:
        raise PlanError(f"no node is in pool(s) {', '.join(unknown)} (pools: {', '.join(sorted(members))})")
    return [
        Pool(
            name=name,
            hosts=tuple(h for h in sorted(members[name]) if only is None or h in only)
            if not chosen or name in chosen
            else (),
            size=len(members[name]),
            min_available=floors[name],
        )
        for name in sorted(members)
    ]


def patch_order(pools: Sequence[Pool], serial: object) -> list[list[str]]:
    """The batches: at most `serial` nodes each, never more of one pool than it may have out.

    The pools' nodes are taken in turn (round robin, pools by name, nodes by name), so a batch
    mixes pools before it takes a second node of one.

    Raises:
        PlanError: a bad serial, or a pool whose floor leaves none of its nodes to patch.
    """
    waiting = {p.name: list(p.hosts) for p in pools if p.hosts}
    limits = {p.name: p.may_be_out for p in pools}
    for name in waiting:
        if limits[name] < 1:
            pool = next(p for p in pools if p.name == name)
            raise PlanError(
                f"pool {name} has {pool.size} node(s) and min_available {pool.min_available}: "
                "none may be out of service, so none can be patched"
            )
    size = batch_size(serial, sum(len(h) for h in waiting.values()))
    batches: list[list[str]] = []
    while any(waiting.values()):
        batch: list[str] = []
        taken: dict[str, int] = {}
        progress = True
        while len(batch) < size and progress:
            progress = False
            for name in sorted(waiting):
                if waiting[name] and taken.get(name, 0) < limits[name] and len(batch) < size:
                    batch.append(waiting[name].pop(0))
                    taken[name] = taken.get(name, 0) + 1
                    progress = True
        batches.append(batch)
    return batches
