# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""One entry of gpurack_teams, checked and completed into a Team (every message names the team)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import unknown_key_errors
from ansible_collections.gpurack.bootstrap.plugins.module_utils.names import dns_label_error
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import quantity
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import (
    DEFAULT_CONTAINER_LIMIT,
    DEFAULT_CONTAINER_REQUEST,
    DEFAULT_STORAGE,
    DEFAULT_VOLUME_CLAIMS,
    KUBERNETES_NAMESPACES,
    Resources,
    Team,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.quantity import (
    Quantity,
    QuantityError,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.serving import services_from

TEAM_KEYS = (
    "name",
    "groups",
    "quota",
    "borrowing_limit",
    "lending_limit",
    "priority",
    "pod_security",
    "storage",
    "volume_claims",
    "container_defaults",
    "inference",
)
CONTAINER_DEFAULT_KEYS = ("request", "limit")
CONTAINER_RESOURCE_KEYS = ("cpu", "memory")
RESOURCE_KEYS = ("gpus", "cpu", "memory")
POD_SECURITY = ("restricted", "baseline")
# A pool quota that names only GPUs gets this much CPU and memory per GPU (none for 0 GPUs:
# the team then borrows CPU and memory in the cohort as it borrows GPUs).
CPU_PER_GPU = quantity.parse("8")
MEMORY_PER_GPU = quantity.parse("64Gi")


def team_from(
    entry: object,
    index: int,
    pools: set[str],
    classes: set[str],
    errors: list[str],
    *,
    platform: frozenset[str] = frozenset(KUBERNETES_NAMESPACES),
) -> Team | None:
    """The Team of gpurack_teams[index]; None (with its problems added to `errors`) when it is wrong.

    `platform`: the namespaces the platform itself uses (Site.platform_namespaces), which no
    team's namespace may be."""
    if not isinstance(entry, Mapping):
        errors.append(f"gpurack_teams[{index}] must be a mapping with name, groups and quota")
        return None
    found: list[str] = []
    name = entry.get("name")
    where = f"team {name}" if isinstance(name, str) and name else f"gpurack_teams[{index}]"
    found.extend(unknown_key_errors(where, entry, TEAM_KEYS))
    found.extend(_name_errors(where, name, platform))
    groups = _groups(where, entry.get("groups"), found)
    quota = _pool_map(where, "quota", entry.get("quota"), pools, found, complete=True)
    limits = {
        key: _pool_map(where, key, entry.get(key) or {}, set(quota), found, complete=False)
        for key in ("borrowing_limit", "lending_limit")
    }
    found.extend(_lending_errors(where, quota, limits["lending_limit"]))
    priority, pod_security, claims = _scalars(where, entry, classes, found)
    storage = _quantity(f"{where}: storage", entry.get("storage", DEFAULT_STORAGE), found)
    request, limit = _container_defaults(where, entry.get("container_defaults") or {}, found)
    services = services_from(where, entry.get("inference"), str(name), found)
    errors.extend(found)
    if found:
        return None
    return Team(
        name=str(name),
        groups=groups,
        quota=quota,
        borrowing_limit=limits["borrowing_limit"],
        lending_limit=limits["lending_limit"],
        priority=None if priority is None else str(priority),
        pod_security=str(pod_security),
        storage=storage or quantity.ZERO,
        volume_claims=int(claims),
        container_request=request,
        container_limit=limit,
        inference=services,
    )


def _scalars(
    where: str, entry: Mapping[str, Any], classes: set[str], found: list[str]
) -> tuple[Any, Any, Any]:
    """The team's priority class, pod security level and volume-claim count, each checked."""
    priority = entry.get("priority")
    if priority is not None and (not isinstance(priority, str) or priority not in classes):
        found.append(f"{where}: priority {priority!r} is not a priority class ({', '.join(sorted(classes))})")
    pod_security = entry.get("pod_security", "restricted")
    if pod_security not in POD_SECURITY:
        found.append(f"{where}: pod_security must be one of {', '.join(POD_SECURITY)}, got {pod_security!r}")
    claims = entry.get("volume_claims", DEFAULT_VOLUME_CLAIMS)
    if isinstance(claims, bool) or not isinstance(claims, int) or claims < 0:
        found.append(f"{where}: volume_claims must be a count of 0 or more, got {claims!r}")
    return priority, pod_security, claims


def _container_defaults(
    where: str, raw: object, errors: list[str]
) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """The LimitRange's default request and limit: gpurack's defaults where the team names none.

    The API server refuses a default request above the default limit, so that is refused here."""
    key = f"{where}: container_defaults"
    if not isinstance(raw, Mapping):
        errors.append(f"{key} must be a mapping with request and limit, got {raw!r}")
        return {}, {}
    errors.extend(unknown_key_errors(key, raw, CONTAINER_DEFAULT_KEYS))
    found: dict[str, dict[str, Quantity]] = {}
    for part, defaults in (("request", DEFAULT_CONTAINER_REQUEST), ("limit", DEFAULT_CONTAINER_LIMIT)):
        given = raw.get(part) or {}
        if not isinstance(given, Mapping):
            errors.append(f"{key}.{part} must be a mapping of cpu and memory, got {given!r}")
            given = {}
        errors.extend(unknown_key_errors(f"{key}.{part}", given, CONTAINER_RESOURCE_KEYS))
        found[part] = {}
        for name in CONTAINER_RESOURCE_KEYS:
            value = _quantity(f"{key}.{part}.{name}", given.get(name, defaults[name]), errors)
            if value is not None:
                found[part][name] = value
    for name in CONTAINER_RESOURCE_KEYS:
        request, limit = found["request"].get(name), found["limit"].get(name)
        if request is not None and limit is not None and request.value > limit.value:
            errors.append(f"{key}: request.{name} {request} exceeds limit.{name} {limit}")
    return found["request"], found["limit"]


def _name_errors(where: str, name: object, platform: frozenset[str]) -> list[str]:
    """The team's name becomes its Namespace (a DNS label), ClusterQueue and LocalQueue."""
    if err := dns_label_error(f"{where}: name", name, "research"):
        return [err]
    if name in KUBERNETES_NAMESPACES or str(name).startswith("kube-"):
        return [f"{where}: name {name!r} is a namespace Kubernetes keeps for itself"]
    if name in platform:
        taken = ", ".join(sorted(platform))
        return [f"{where}: name {name!r} is a namespace the platform itself uses ({taken})"]
    return []


def _groups(where: str, raw: object, errors: list[str]) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw or not all(isinstance(g, str) and g for g in raw):
        errors.append(f"{where}: groups must be a non-empty list of identity-provider group names")
        return ()
    return tuple(sorted(set(raw)))


def _pool_map(
    where: str, key: str, raw: object, pools: set[str], errors: list[str], *, complete: bool
) -> dict[str, Resources]:
    """A {pool: {gpus, cpu, memory}} mapping; `pools` are the names it may use."""
    if not isinstance(raw, Mapping) or (complete and not raw):
        errors.append(f"{where}: {key} must be a mapping of pool names to {{gpus, cpu, memory}}")
        return {}
    result: dict[str, Resources] = {}
    for pool in sorted(raw, key=str):
        if pool not in pools:
            known = ", ".join(sorted(pools)) or "none"
            scope = "known pools" if complete else "pools in its quota"
            errors.append(f"{where}: {key} names pool {pool!r}, which is not one of its {scope} ({known})")
            continue
        resources = _resources(f"{where}: {key}.{pool}", raw[pool], errors, complete=complete)
        if resources is not None:
            result[str(pool)] = resources
    return result


def _resources(where: str, raw: object, errors: list[str], *, complete: bool) -> Resources | None:
    if not isinstance(raw, Mapping):
        errors.append(f"{where} must be a mapping of gpus, cpu and memory, got {raw!r}")
        return None
    errors.extend(unknown_key_errors(where, raw, RESOURCE_KEYS))
    gpus = raw.get("gpus", 0 if complete else None)
    if gpus is not None and (isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 0):
        errors.append(f"{where}.gpus must be a count of 0 or more, got {gpus!r}")
        return None
    cpu = _quantity(f"{where}.cpu", raw.get("cpu"), errors)
    memory = _quantity(f"{where}.memory", raw.get("memory"), errors)
    if complete:
        per_gpu = Fraction(gpus or 0)
        cpu = cpu or Quantity(CPU_PER_GPU.value * per_gpu)
        memory = memory or Quantity(MEMORY_PER_GPU.value * per_gpu, binary=True)
    return Resources(gpus=gpus, cpu=cpu, memory=memory)


def _quantity(where: str, raw: Any, errors: list[str]) -> Quantity | None:
    if raw is None:
        return None
    try:
        return quantity.parse(raw)
    except QuantityError as exc:
        errors.append(f"{where}: {exc}")
        return None


def _lending_errors(
    where: str, quota: Mapping[str, Resources], lending: Mapping[str, Resources]
) -> list[str]:
    """Kueue refuses a lendingLimit above the nominal quota."""
    errors = []
    for pool, limit in lending.items():
        nominal = quota[pool]
        if (limit.gpus or 0) > (nominal.gpus or 0):
            errors.append(f"{where}: lending_limit.{pool}.gpus {limit.gpus} exceeds its quota {nominal.gpus}")
        for key in ("cpu", "memory"):
            lent, own = getattr(limit, key), getattr(nominal, key)
            if lent is not None and own is not None and lent.value > own.value:
                errors.append(f"{where}: lending_limit.{pool}.{key} {lent} exceeds its quota {own}")
    return errors
