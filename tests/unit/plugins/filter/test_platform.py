"""The platform_site filter: the site as a plain dict, bad input as AnsibleFilterError."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.filter.platform import FilterModule, platform_site
from platform_inputs import hostvars, site, site_vars


def test_platform_site_returns_the_site_as_a_plain_dict() -> None:
    found = hostvars()
    result = platform_site(found, sorted(found), site_vars())
    assert result == site().to_dict()
    assert [p["name"] for p in result["pools"]] == ["h100-train-a", "h200-inference"]
    assert result["pools"][0]["gpus"] == 16
    assert result["cohort"] == "site"


def test_platform_site_names_the_filter_and_the_problem() -> None:
    found = hostvars()
    with pytest.raises(
        AnsibleFilterError, match=r"^platform_site: team Bad: name: 'Bad' must be a DNS label"
    ):
        platform_site(
            found, sorted(found), {"gpurack_teams": [{"name": "Bad", "groups": ["g"], "quota": {}}]}
        )
    with pytest.raises(AnsibleFilterError, match="host 'nowhere' is not in hostvars"):
        platform_site(found, ["nowhere"], site_vars())
    with pytest.raises(AnsibleFilterError, match="expects hostvars, a list of host names"):
        platform_site(found, "h100-a-01", site_vars())


def test_filter_module_maps_platform_site() -> None:
    assert FilterModule().filters() == {"platform_site": platform_site}
