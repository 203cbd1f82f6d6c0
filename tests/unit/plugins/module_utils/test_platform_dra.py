"""DRA pools (gpurack_pool.allocation: dra): their DeviceClass, the teams' claim templates, the quota
that caps their devices, and the inputs refused before any object is built."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import pool_errors
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.dra import dra_objects
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.objects import build_objects
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.site import (
    PlatformInputError,
    Site,
    site_from_dict,
    site_from_hostvars,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.tenancy import tenancy_objects
from platform_inputs import H100, TEAMS, hostvars, site, site_vars

POOL = "h100-train-a"
CLASS = f"{POOL}.gpurack.io"
QUOTA_KEY = f"{CLASS}.deviceclass.resource.k8s.io/devices"


def _dra_site(**overrides: Any) -> Site:
    found = hostvars()
    for host in ("h100-a-01", "h100-a-02"):
        found[host]["gpurack_pool"]["allocation"] = "dra"
    return site_from_hostvars(found, sorted(found), site_vars(**overrides))


def _quota(site_: Site, team: str) -> dict[str, str]:
    (quota,) = [
        o
        for o in tenancy_objects(site_)
        if o["kind"] == "ResourceQuota" and o["metadata"]["namespace"] == team
    ]
    hard: dict[str, str] = quota["spec"]["hard"]
    return hard


def test_dra_objects_without_a_dra_pool_are_none() -> None:
    plain = site()
    assert all(p.allocation == "device-plugin" for p in plain.pools)
    assert dra_objects(plain) == []
    assert QUOTA_KEY not in _quota(plain, "research")


def test_device_class_selects_nvidias_driver_by_default() -> None:
    (device_class,) = [o for o in dra_objects(_dra_site()) if o["kind"] == "DeviceClass"]
    assert device_class == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {
            "name": CLASS,
            "labels": {"app.kubernetes.io/managed-by": "gpurack", "gpurack.io/pool": POOL},
        },
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]},
    }


def test_device_class_selects_the_driver_the_inventory_names() -> None:
    found = _dra_site(gpurack_dra_driver="gpu.example.com")
    (device_class,) = [o for o in dra_objects(found) if o["kind"] == "DeviceClass"]
    assert device_class["spec"]["selectors"][0]["cel"]["expression"] == "device.driver == 'gpu.example.com'"
    assert site_from_dict(found.to_dict()) == found


def test_claim_templates_go_to_each_team_with_quota_on_the_pool() -> None:
    teams = [
        *copy.deepcopy(TEAMS),
        {"name": "serving-only", "groups": ["s"], "quota": {"h200-inference": {}}},
    ]
    templates = [
        o for o in dra_objects(_dra_site(gpurack_teams=teams)) if o["kind"] == "ResourceClaimTemplate"
    ]
    assert [(t["metadata"]["namespace"], t["metadata"]["name"]) for t in templates] == [
        ("inference", f"{POOL}-gpu"),
        ("research", f"{POOL}-gpu"),
    ]
    assert templates[1]["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "gpurack",
        "gpurack.io/pool": POOL,
        "gpurack.io/team": "research",
    }
    assert templates[1]["spec"] == {
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {"deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1},
                    }
                ]
            }
        }
    }


def test_resource_quota_caps_a_dra_pools_devices_at_the_teams_ceiling() -> None:
    found = _dra_site()
    # research: 12 nominal + 4 borrowed (inference lends 2 of its 4, research may borrow 4 -> 2)
    assert _quota(found, "research")[QUOTA_KEY] == "14"
    # inference: 4 nominal + research's 12 (no borrowing limit, research lends all)
    assert _quota(found, "inference")[QUOTA_KEY] == "16"
    # the extended resource keeps its namespace-wide ceiling, as before
    assert (
        _quota(found, "research")["requests.nvidia.com/gpu"]
        == _quota(site(), "research")["requests.nvidia.com/gpu"]
    )


def test_build_objects_puts_the_device_class_after_namespaces_and_before_namespaced_objects() -> None:
    built = build_objects(_dra_site(), ("tenancy", "dra"))
    kinds = [o["kind"] for o in built]
    first_namespaced = next(i for i, o in enumerate(built) if "namespace" in o["metadata"])
    assert kinds.index("DeviceClass") < first_namespaced
    assert kinds.index("DeviceClass") > max(i for i, k in enumerate(kinds) if k == "Namespace")
    assert "ResourceClaimTemplate" in kinds


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"allocation": "mig-partitions"},
            "pool.allocation must be one of device-plugin, dra; got 'mig-partitions'",
        ),
        ({"allocation": None}, "pool.allocation must be one of device-plugin, dra; got None"),
        (
            {"allocation": "dra", "sharing": "time-slicing", "time_slicing": {"replicas": 4}},
            "pool.allocation dra needs sharing full-gpu, got 'time-slicing'",
        ),
        (
            {"allocation": "dra", "workload": "inference"},
            "pool.allocation dra is for training and batch pools",
        ),
    ],
)
def test_pool_errors_refuses_a_bad_allocation(change: dict[str, Any], message: str) -> None:
    errors = pool_errors({**H100, **change})
    assert any(message in e for e in errors), errors


@pytest.mark.parametrize("allocation", ["device-plugin", "dra"])
def test_pool_errors_accepts_each_allocation(allocation: str) -> None:
    assert pool_errors({**H100, "allocation": allocation}) == []


def test_site_refuses_a_bad_allocation_and_driver_in_one_error() -> None:
    found = hostvars()
    for host in ("h100-a-01", "h100-a-02"):
        found[host]["gpurack_pool"]["allocation"] = "claims"
    with pytest.raises(PlatformInputError) as caught:
        site_from_hostvars(found, sorted(found), site_vars(gpurack_dra_driver="GPU_Nvidia"))
    text = str(caught.value)
    assert (
        "host h100-a-01: gpurack_pool: pool.allocation must be one of device-plugin, dra; got 'claims'"
        in text
    )
    assert "gpurack_dra_driver: 'GPU_Nvidia' must be a DNS subdomain" in text


def test_site_refuses_hosts_of_one_pool_that_disagree_on_allocation() -> None:
    found = hostvars()
    found["h100-a-02"]["gpurack_pool"]["allocation"] = "dra"
    with pytest.raises(PlatformInputError, match="differ in workload, sharing, allocation or taints"):
        site_from_hostvars(found, sorted(found), site_vars())
