# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The site as the platform layer sees it: pools from the hosts' inventory, teams from gpurack_teams.

`site_from_hostvars` reads the inventory (a pool's GPUs from each host's gpurack_gpu facts,
else its gpurack_expect count); `Site.to_dict` and `site_from_dict` carry it between the
filter, the module and the driver. Every input is checked here, all problems in one error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional, TypeVar

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import validate_expect
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import (
    DEFAULT_ALLOCATION,
    pool_errors,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.names import (
    dns_label_error,
    dns_subdomain_error,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import (
    DEFAULT_COHORT,
    DEFAULT_DRA_DRIVER,
    DEFAULT_GPU_OPERATOR_NAMESPACE,
    DEFAULT_OBSERVABILITY_NAMESPACE,
    ModelCacheConfig,
    ObjectStore,
    PlatformInputError,
    Pool,
    PriorityClass,
    Resources,
    Site,
    Team,
    platform_namespaces,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.serving import (
    NVME_SCRATCH_MOUNTPOINT,
    model_cache_from,
    serving_errors,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.settings import (
    dra_driver_from,
    metrics_adapter_image_from,
    object_store_from,
    overcommit_from,
    priority_classes_from,
    prometheus_url_from,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.teams import team_from
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.topology import (
    host_levels,
    pool_topology,
    topology_errors,
)

__all__ = [
    "ObjectStore",
    "PlatformInputError",
    "Pool",
    "PriorityClass",
    "Resources",
    "Site",
    "Team",
    "site_from_dict",
    "site_from_hostvars",
]

T = TypeVar("T")
# host, its gpurack_pool, GPUs, facts|expect, its model cache (inference pools), its topology levels
_Member = tuple[str, Mapping[str, Any], int, str, Optional[ModelCacheConfig], tuple[str, ...]]  # noqa: UP045


def site_from_hostvars(
    hostvars: Mapping[str, Mapping[str, Any]], hosts: Sequence[str], site_vars: Mapping[str, Any]
) -> Site:
    """The site of `hosts` (each with gpurack_pool) and `site_vars` (gpurack_teams, gpurack_cohort, ...).

    Hosts without gpurack_pool (a control plane) are left out.

    Raises:
        PlatformInputError: every problem with the pools, teams and settings, joined by '; '.
    """
    errors: list[str] = topology_errors(site_vars)
    pools = _pools(hostvars, hosts, site_vars, errors)
    return _site(pools, errors, **_settings(site_vars, by_variable=True))


def site_from_dict(data: Mapping[str, Any]) -> Site:
    """A Site from Site.to_dict()'s shape, checked as inventory is.

    Raises:
        PlatformInputError: the dict is not a site, or its parts are wrong.
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("pools"), list):
        raise PlatformInputError("site must be a mapping of pools and teams (filter platform_site's output)")
    errors: list[str] = []
    pools = []
    for raw in data["pools"]:
        try:
            pools.append(_pool_from_dict(raw))
        except (KeyError, TypeError, ValueError) as exc:
            errors.append(f"site pools: {raw!r} is not a pool ({exc})")
    return _site(tuple(pools), errors, **_settings(data, by_variable=False))


# Each site-wide setting: its Site field, the inventory variable it is read from, its default.
_SETTINGS = (
    ("teams", "gpurack_teams", None),
    ("cohort", "gpurack_cohort", DEFAULT_COHORT),
    ("overcommit", "gpurack_quota_overcommit", False),
    ("object_store", "gpurack_object_store", None),
    ("priority_classes", "gpurack_priority_classes", None),
    ("observability_namespace", "observability_namespace", DEFAULT_OBSERVABILITY_NAMESPACE),
    ("gpu_operator_namespace", "gpu_operator_namespace", DEFAULT_GPU_OPERATOR_NAMESPACE),
    ("prometheus_url", "gpurack_prometheus_url", None),
    ("metrics_adapter_image", "gpurack_metrics_adapter_image", None),
    ("dra_driver", "gpurack_dra_driver", None),
)


def _settings(raw: Mapping[str, Any], by_variable: bool) -> dict[str, Any]:
    """The settings of `raw`, keyed by inventory variable (site_vars) or by Site field (to_dict)."""
    return {
        name: raw.get(variable if by_variable else name, default) for name, variable, default in _SETTINGS
    }


def _pool_from_dict(raw: Mapping[str, Any]) -> Pool:
    source = str(raw["gpus_source"])
    gpus = raw["gpus"]
    if source not in ("facts", "expect") or isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 0:
        raise ValueError("gpus must be a count of 0 or more, from facts or expect")
    definition = {k: raw[k] for k in ("name", "workload", "sharing", "taints")}
    definition["allocation"] = raw.get("allocation", DEFAULT_ALLOCATION)
    if errors := pool_errors(definition):
        raise ValueError("; ".join(errors))
    cache = raw.get("model_cache")
    model_cache = ModelCacheConfig(str(cache["path"]), int(cache["size"])) if cache else None
    return Pool(
        name=str(raw["name"]),
        hosts=tuple(str(h) for h in raw["hosts"]),
        taints=tuple(_taint(t) for t in raw["taints"]),
        sharing=str(raw["sharing"]),
        workload=str(raw["workload"]),
        gpus=gpus,
        gpus_source=source,
        model_cache=model_cache,
        topology=tuple(str(level) for level in raw.get("topology") or ()),
        allocation=str(definition["allocation"]),
    )


def _checked(errors: list[str], parse: Callable[[Any], T], raw: Any, default: T) -> T:
    """parse(raw), or `default` with the ValueError's message added to `errors`."""
    try:
        return parse(raw)
    except ValueError as exc:
        errors.append(str(exc))
        return default


def _site(pools: tuple[Pool, ...], errors: list[str], **raw: Any) -> Site:
    """Check the site-wide settings and the teams against `pools`; raise with every error found."""
    cohort = raw["cohort"]
    namespaces = {key: raw[key] for key in ("observability_namespace", "gpu_operator_namespace")}
    if err := dns_subdomain_error("gpurack_cohort", cohort, "site"):
        errors.append(err)
    for where, name in namespaces.items():
        if err := dns_label_error(where, name, "gpurack-observability"):
            errors.append(err)
    overcommit = _checked(errors, overcommit_from, raw["overcommit"], False)
    store = _checked(errors, object_store_from, raw["object_store"], None)
    no_classes: tuple[PriorityClass, ...] = ()
    classes = _checked(errors, priority_classes_from, raw["priority_classes"], no_classes)
    prometheus_url = _checked(errors, prometheus_url_from, raw["prometheus_url"], "")
    adapter_image = _checked(errors, metrics_adapter_image_from, raw["metrics_adapter_image"], "")
    dra_driver = _checked(errors, dra_driver_from, raw["dra_driver"], DEFAULT_DRA_DRIVER)
    platform = platform_namespaces(
        str(namespaces["observability_namespace"]), str(namespaces["gpu_operator_namespace"]), store
    )
    teams = _teams(raw["teams"], {p.name for p in pools}, {c.name for c in classes}, platform, errors)
    unknown = sorted(set(store.teams or ()) - {t.name for t in teams}) if store is not None else []
    if unknown:
        errors.append(f"gpurack_object_store.teams: {', '.join(unknown)} not in gpurack_teams")
    if any(t.inference for t in teams) and raw["prometheus_url"] in (None, ""):
        errors.append(
            "gpurack_prometheus_url is not set: the inference services' autoscalers read their metric"
            " through prometheus-adapter, which queries Prometheus there (playbooks/platform.yml and"
            " platform render default it to the first kube_control_plane host's address, port 9090)"
        )
    if errors:
        raise PlatformInputError("; ".join(errors))
    site = Site(
        teams=teams,
        cohort=str(cohort),
        pools=tuple(sorted(pools, key=lambda p: p.name)),
        overcommit=overcommit,
        object_store=store,
        priority_classes=classes,
        prometheus_url=prometheus_url,
        metrics_adapter_image=adapter_image,
        dra_driver=dra_driver,
        **{key: str(name) for key, name in namespaces.items()},
    )
    # A service on a pool its team cannot serve from is refused before any object is built.
    if problems := serving_errors(site):
        raise PlatformInputError("; ".join(problems))
    return site


def _teams(
    raw: object, pools: set[str], classes: set[str], platform: frozenset[str], errors: list[str]
) -> tuple[Team, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        errors.append(f"gpurack_teams must be a list of teams, got {type(raw).__name__}")
        return ()
    teams: list[Team] = []
    for index, entry in enumerate(raw):
        team = team_from(entry, index, pools, classes, errors, platform=platform)
        if team is None:
            continue
        if any(t.name == team.name for t in teams):
            errors.append(f"gpurack_teams[{index}]: duplicate team name {team.name!r}")
            continue
        teams.append(team)
    return tuple(sorted(teams, key=lambda t: t.name))


def _pools(
    hostvars: Mapping[str, Mapping[str, Any]],
    hosts: Sequence[str],
    site_vars: Mapping[str, Any],
    errors: list[str],
) -> tuple[Pool, ...]:
    """The pools of `hosts`, grouped by gpurack_pool.name; problems go to `errors`."""
    members: dict[str, list[_Member]] = {}
    for host in hosts:
        hv = hostvars[host]
        pool = hv.get("gpurack_pool")
        if pool is None:
            continue
        if problems := pool_errors(pool):
            errors.extend(f"host {host}: gpurack_pool: {p}" for p in problems)
            continue
        if problems := validate_expect(hv.get("gpurack_expect")):
            errors.extend(f"host {host}: {p}" for p in problems)
            continue
        mountpoint = hv.get("nvme_scratch_mountpoint") or NVME_SCRATCH_MOUNTPOINT
        scratch = str(mountpoint) if hv.get("nvme_scratch_devices") else None
        cache, problems = model_cache_from(f"host {host}: gpurack_pool", pool, scratch)
        if problems:
            errors.extend(problems)
            continue
        gpus, source = _host_gpus(hv)
        levels = host_levels(hv, site_vars)
        members.setdefault(str(pool["name"]), []).append((host, pool, gpus, source, cache, levels))
    return tuple(_pool(name, found, site_vars, errors) for name, found in sorted(members.items()))


def _pool(name: str, members: list[_Member], site_vars: Mapping[str, Any], errors: list[str]) -> Pool:
    first_host, first, _gpus, _source, cache, _levels = members[0]
    for host, pool, _gpus, _source, other_cache, _levels in members[1:]:
        if _identity(pool) != _identity(first):
            what = "workload, sharing, allocation or taints"
            errors.append(f"pool {name}: hosts {first_host} and {host} differ in {what}")
        elif other_cache != cache:
            errors.append(
                f"pool {name}: hosts {first_host} and {host} differ in their model cache's path or size"
            )
    return Pool(
        name=name,
        hosts=tuple(sorted(m[0] for m in members)),
        taints=tuple(_taint(t) for t in first.get("taints") or []),
        sharing=str(first["sharing"]),
        workload=str(first["workload"]),
        gpus=sum(m[2] for m in members),
        gpus_source="facts" if all(m[3] == "facts" for m in members) else "expect",
        model_cache=cache,
        topology=pool_topology([m[5] for m in members], site_vars),
        allocation=str(first.get("allocation", DEFAULT_ALLOCATION)),
    )


def _taint(raw: Mapping[str, Any]) -> dict[str, str]:
    return {k: "" if raw.get(k) is None else str(raw[k]) for k in ("key", "value", "effect")}


def _identity(pool: Mapping[str, Any]) -> tuple[object, ...]:
    taints = [_taint(t) for t in pool.get("taints") or []]
    return (pool.get("workload"), pool.get("sharing"), pool.get("allocation", DEFAULT_ALLOCATION), taints)


def _host_gpus(hv: Mapping[str, Any]) -> tuple[int, str]:
    """A host's GPU count from its gpurack_gpu fact, else its gpurack_expect.gpu.count, else 0."""
    facts = hv.get("ansible_facts")
    gpu = hv.get("gpurack_gpu") or (facts.get("gpurack_gpu") if isinstance(facts, Mapping) else None)
    if isinstance(gpu, Mapping) and isinstance(gpu.get("count"), int):
        return int(gpu["count"]), "facts"
    expect = hv.get("gpurack_expect")
    gpu_expect = expect.get("gpu") if isinstance(expect, Mapping) else None
    count = gpu_expect.get("count") if isinstance(gpu_expect, Mapping) else None
    return (count if isinstance(count, int) and not isinstance(count, bool) else 0), "expect"
