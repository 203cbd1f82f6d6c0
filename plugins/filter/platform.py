# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Platform filter: platform_site (docs: platform_site.yml beside this file)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.site import (
    PlatformInputError,
    site_from_hostvars,
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


class FilterModule:
    """gpurack.bootstrap platform filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"platform_site": platform_site}
