# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Platform filters: platform_site, removed_team_objects, removed_inference_services,
model_cache_dirs and serving_target (docs: their .yml files beside this one)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import (
    PlatformInputError,
    site_from_dict,
    site_from_hostvars,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import (
    model_cache_dirs as _model_cache_dirs,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import (
    removed_services as _removed_services,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import (
    removed_team_objects as _removed_team_objects,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import (
    serving_target as _serving_target,
)


def platform_site(
    hostvars: Mapping[str, Mapping[str, Any]], hosts: Sequence[str], site_vars: Mapping[str, Any]
) -> dict[str, Any]:
    """The site (pools of `hosts`, teams and settings of `site_vars`) as a plain dict."""
    if not isinstance(site_vars, Mapping) or isinstance(hosts, (str, bytes)):
        raise AnsibleFilterError(
            "platform_site expects hostvars, a list of host names and a mapping of the site's "
            "variables (gpurack_teams, gpurack_cohort, ...)"
        )
    try:
        return site_from_hostvars(hostvars, list(hosts), site_vars).to_dict()
    except PlatformInputError as exc:
        raise AnsibleFilterError(f"platform_site: {exc}") from exc
    except KeyError as exc:
        raise AnsibleFilterError(f"platform_site: host {exc} is not in hostvars") from exc


def _objects_and_teams(
    name: str, objects: object, site: object
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """The mappings of `objects` and the site's teams; AnsibleFilterError naming `name` otherwise."""
    teams = site.get("teams") if isinstance(site, Mapping) else None
    if (
        isinstance(objects, (str, bytes, Mapping))
        or not isinstance(objects, Sequence)
        or not isinstance(teams, list)
    ):
        raise AnsibleFilterError(
            f"{name} expects a list of Kubernetes objects and the site (platform_site's output)"
        )
    return [o for o in objects if isinstance(o, Mapping)], [t for t in teams if isinstance(t, Mapping)]


def removed_team_objects(
    objects: Sequence[Mapping[str, Any]], site: Mapping[str, Any]
) -> list[dict[str, str]]:
    """The objects (k8s_info resources) gpurack made for teams that `site` no longer has."""
    listed, teams = _objects_and_teams("removed_team_objects", objects, site)
    return _removed_team_objects(listed, (t["name"] for t in teams if "name" in t))


def removed_inference_services(
    objects: Sequence[Mapping[str, Any]], site: Mapping[str, Any]
) -> list[dict[str, str]]:
    """Every object of each inference service gpurack made that `site`'s teams no longer declare."""
    listed, teams = _objects_and_teams("removed_inference_services", objects, site)
    declared = [
        (str(team["name"]), str(service["name"]))
        for team in teams
        for service in team.get("inference") or []
        if isinstance(service, Mapping)
    ]
    return _removed_services(listed, declared)


def model_cache_dirs(site: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each serving pool node's folder for each team that serves there: [{host, root, path, uid}]."""
    if not isinstance(site, Mapping):
        raise AnsibleFilterError("model_cache_dirs expects the site (platform_site's output)")
    try:
        return _model_cache_dirs(site_from_dict(site))
    except (PlatformInputError, KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"model_cache_dirs: not a site ({exc})") from exc


def serving_target(site: Mapping[str, Any], team: str, service: str) -> dict[str, Any]:
    """One team's inference service as `gpurack accept --inference` needs it (url, replicas,
    objective, the cache folder on each node of its pool)."""
    if not isinstance(site, Mapping):
        raise AnsibleFilterError("serving_target expects the site (platform_site's output)")
    try:
        return _serving_target(site_from_dict(site), str(team), str(service))
    except (PlatformInputError, KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"serving_target: {exc}") from None


class FilterModule:
    """gpurack.bootstrap platform filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "platform_site": platform_site,
            "removed_team_objects": removed_team_objects,
            "removed_inference_services": removed_inference_services,
            "model_cache_dirs": model_cache_dirs,
            "serving_target": serving_target,
        }
