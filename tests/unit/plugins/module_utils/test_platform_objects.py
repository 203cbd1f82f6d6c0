"""Capacity against quota, and build_objects: apply order, sections, overcommit refused or allowed."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.capacity import (
    pool_capacity,
    quota_errors,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.objects import build_objects
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.site import (
    PlatformInputError,
    site_from_hostvars,
)
from platform_inputs import TEAMS, hostvars, site, site_vars


def _over(inference_gpus: int) -> list[dict[str, Any]]:
    teams = [dict(t) for t in TEAMS]
    teams[1] = {**teams[1], "quota": {**teams[1]["quota"], "h100-train-a": {"gpus": inference_gpus}}}
    return teams


def test_pool_capacity_sums_the_nominal_quota_per_pool() -> None:
    found = [c.to_dict() for c in pool_capacity(site())]
    assert found == [
        {
            "pool": "h100-train-a",
            "gpus": 16,
            "source": "expect",
            "hosts": 2,
            "nominal": 16,
            "teams": {"inference": 4, "research": 12},
        },
        {
            "pool": "h200-inference",
            "gpus": 2,
            "source": "expect",
            "hosts": 2,
            "nominal": 2,
            "teams": {"inference": 2},
        },
    ]
    assert quota_errors(site()) == []


def test_quota_errors_name_the_teams_and_the_pool_and_the_source() -> None:
    (error,) = quota_errors(site(gpurack_teams=_over(8)))
    assert error.startswith(
        "teams inference (8), research (12) ask 20 GPUs of pool h100-train-a, which has 16 (expect)"
    )
    assert "gpurack_quota_overcommit: true" in error


def test_quota_errors_count_facts_when_the_hosts_have_them() -> None:
    found = hostvars(h100_facts=4)
    found["h100-a-02"]["gpurack_gpu"] = {"count": 8}
    teams = [{"name": "research", "groups": ["g"], "quota": {"h100-train-a": {"gpus": 16}}}]
    facts_site = site_from_hostvars(found, sorted(found), site_vars(gpurack_teams=teams))
    assert quota_errors(facts_site) == [
        "team research asks 16 GPUs of pool h100-train-a, which has 12 (facts); "
        "lower the quota or set gpurack_quota_overcommit: true"
    ]


def test_build_objects_refuses_overcommit_before_building_anything() -> None:
    with pytest.raises(PlatformInputError, match="ask 20 GPUs of pool h100-train-a, which has 16"):
        build_objects(site(gpurack_teams=_over(8)))
    with pytest.raises(PlatformInputError, match="which has 16"):
        build_objects(site(gpurack_teams=_over(8)), ("kueue",))


def test_build_objects_allows_overcommit_when_the_site_says_so() -> None:
    objects = build_objects(site(gpurack_teams=_over(8), gpurack_quota_overcommit=True))
    queue = next(o for o in objects if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "inference")
    assert queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["nominalQuota"] == "8"


def test_build_objects_puts_namespaces_first_then_cluster_objects_then_each_namespace() -> None:
    kinds = [o["kind"] for o in build_objects(site())]
    assert kinds[:2] == ["Namespace", "Namespace"]
    assert kinds[2:8] == ["WorkloadPriorityClass"] * 3 + ["ResourceFlavor"] * 2 + ["ClusterQueue"]
    namespaced = [o["metadata"]["namespace"] for o in build_objects(site())[9:]]
    assert namespaced == sorted(namespaced)  # each namespace's objects together
    assert "LocalQueue" in kinds[9:]


def test_build_objects_is_deterministic_and_builds_only_the_sections_asked() -> None:
    assert build_objects(site()) == build_objects(site())
    assert {o["kind"] for o in build_objects(site(), ("tenancy",))} == {
        "Namespace",
        "Role",
        "RoleBinding",
        "ResourceQuota",
        "LimitRange",
        "NetworkPolicy",
    }
    assert {o["kind"] for o in build_objects(site(), ("kueue",))} == {
        "WorkloadPriorityClass",
        "ResourceFlavor",
        "ClusterQueue",
        "LocalQueue",
    }
    with pytest.raises(PlatformInputError, match="unknown platform sections"):
        build_objects(site(), ("gpu",))


def test_observability_section_is_prometheus_rbac_in_the_sites_namespace() -> None:
    from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.scrape import prometheus_rbac

    objects = build_objects(site(observability_namespace="metrics"), ("observability",))
    assert objects[0] == prometheus_rbac("metrics")[0]  # the namespace first
    key = lambda o: (o["kind"], o["metadata"]["name"])  # noqa: E731
    assert sorted(objects, key=key) == sorted(prometheus_rbac("metrics"), key=key)


def test_gpu_operator_section_is_its_privileged_namespace() -> None:
    assert build_objects(site(), ("gpu_operator",)) == [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": "gpu-operator",
                "labels": {
                    "pod-security.kubernetes.io/enforce": "privileged",
                    "app.kubernetes.io/managed-by": "gpurack",
                },
            },
        }
    ]


def test_a_namespace_setting_that_is_not_a_name_is_refused() -> None:
    with pytest.raises(PlatformInputError, match="gpu_operator_namespace"):
        site(gpu_operator_namespace="GPU Operator")
