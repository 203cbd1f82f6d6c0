"""site_from_hostvars: pools and their GPUs from inventory, teams checked and completed."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import quantity
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.site import (
    PlatformInputError,
    site_from_dict,
    site_from_hostvars,
)
from platform_inputs import TEAMS, hostvars, site, site_vars


def _team(**changes: Any) -> dict[str, Any]:
    return {**TEAMS[0], **changes}


def _refused(teams: list[dict[str, Any]] | None = None, **settings: Any) -> str:
    found = hostvars()
    with pytest.raises(PlatformInputError) as caught:
        site_from_hostvars(found, sorted(found), {"gpurack_teams": teams, **settings})
    return str(caught.value)


def test_site_from_hostvars_groups_hosts_into_pools_with_expected_gpus() -> None:
    result = site()
    assert [(p.name, p.hosts, p.gpus, p.gpus_source) for p in result.pools] == [
        ("h100-train-a", ("h100-a-01", "h100-a-02"), 16, "expect"),
        ("h200-inference", ("h200-inf-01", "h200-inf-02"), 2, "expect"),
    ]
    assert result.pool("h100-train-a").taints == (
        {"key": "gpurack.io/pool", "value": "h100-train-a", "effect": "NoSchedule"},
    )
    assert result.pool("h200-inference").taints == ()


def test_site_from_hostvars_counts_facts_before_expectations() -> None:
    found = hostvars(h100_facts=7)
    pool = site_from_hostvars(found, sorted(found), site_vars()).pool("h100-train-a")
    assert (pool.gpus, pool.gpus_source) == (15, "expect")  # one host from facts, one from expect
    found["h100-a-02"]["ansible_facts"] = {"gpurack_gpu": {"count": 8}}
    pool = site_from_hostvars(found, sorted(found), site_vars()).pool("h100-train-a")
    assert (pool.gpus, pool.gpus_source) == (15, "facts")


def test_site_from_hostvars_completes_quota_and_keeps_limits_unset() -> None:
    teams = {t.name: t for t in site().teams}
    assert [t.name for t in site().teams] == ["inference", "research"]  # stable order
    inference = teams["inference"]
    h100 = inference.quota["h100-train-a"]
    assert (h100.gpus, str(h100.cpu), str(h100.memory)) == (4, "32", "256Gi")  # 8 CPUs and 64Gi per GPU
    h200 = inference.quota["h200-inference"]
    assert (str(h200.cpu), str(h200.memory)) == ("500m", "2Gi")  # canonical, as the API server stores it
    assert inference.lending_limit["h100-train-a"].to_dict() == {"gpus": 2}
    assert inference.groups == ("inference-oncall", "inference-users")
    assert inference.pod_security == "baseline"
    assert teams["research"].pod_security == "restricted"
    assert teams["research"].quota["h200-inference"].to_dict() == {"gpus": 0, "cpu": "0", "memory": "0"}


def test_site_round_trips_through_its_dict() -> None:
    result = site(gpurack_object_store={"cidrs": ["10.0.0.0/24"], "port": 9000})
    assert site_from_dict(result.to_dict()) == result
    in_cluster = {"namespace": "store", "pod_labels": {"app": "s3"}, "port": 7070, "teams": ["research"]}
    result = site(gpurack_object_store={**in_cluster, "endpoint": "http://s3.store.svc:7070", "region": "x"})
    assert result.object_store is not None and result.object_store.to_dict() == {"cidrs": [], **in_cluster}
    assert site_from_dict(result.to_dict()) == result


@pytest.mark.parametrize(
    ("teams", "message"),
    [
        ([_team(quota={"h100-train-b": {"gpus": 1}})], "team research: quota names pool 'h100-train-b'"),
        (
            [_team(quota={"h100-train-a": {"gpus": -1}})],
            "quota.h100-train-a.gpus must be a count of 0 or more",
        ),
        (
            [_team(quota={"h100-train-a": {"gpus": 1, "cpu": "-2"}})],
            "is not a non-negative Kubernetes quantity",
        ),
        ([_team(quota={"h100-train-a": {"gpu": 1}})], "unknown key 'gpu' (did you mean 'gpus'?)"),
        ([_team(), _team()], "gpurack_teams[1]: duplicate team name 'research'"),
        ([_team(name="Research")], "team Research: name: 'Research' must be a DNS label"),
        ([_team(name="kube-system")], "is a namespace Kubernetes keeps for itself"),
        ([_team(groups=[])], "groups must be a non-empty list"),
        (
            [_team(priority="urgent")],
            "priority 'urgent' is not a priority class (batch, inference, training)",
        ),
        ([_team(pod_security="privileged")], "pod_security must be one of restricted, baseline"),
        ([_team(borrowing_limit={"h200-inference": {"gpus": 1}, "x": {}})], "borrowing_limit names pool 'x'"),
        ([_team(lending_limit={"h100-train-a": {"gpus": 13}})], "lending_limit.h100-train-a.gpus 13 exceeds"),
        ([_team(volume_claims=-1)], "volume_claims must be a count of 0 or more"),
        (
            [_team(container_defaults={"request": {"cpu": "2"}})],
            "team research: container_defaults: request.cpu 2 exceeds limit.cpu 1",
        ),
        ([_team(container_defaults={"limits": {}})], "container_defaults: unknown key 'limits'"),
        ([_team(container_defaults={"limit": {"gpu": 1}})], "container_defaults.limit: unknown key 'gpu'"),
        ([_team(container_defaults={"limit": {"memory": "lots"}})], "container_defaults.limit.memory:"),
        ([_team(container_defaults=["4"])], "container_defaults must be a mapping with request and limit"),
        ("research", "gpurack_teams must be a list of teams"),
    ],
)
def test_site_from_hostvars_refuses_bad_teams(teams: Any, message: str) -> None:
    assert message in _refused(teams)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"gpurack_cohort": "My Site"}, "gpurack_cohort: 'My Site' must be a DNS subdomain"),
        ({"gpurack_quota_overcommit": "maybe"}, "gpurack_quota_overcommit must be true or false"),
        ({"gpurack_object_store": {"cidrs": ["10.0.0.300/24"], "port": 443}}, "is not a network"),
        (
            {"gpurack_object_store": {"cidrs": ["10.0.0.0/24"], "port": 0}},
            "port must be a port from 1 to 65535",
        ),
        ({"gpurack_object_store": {"port": 443}}, "unless namespace names an in-cluster store"),
        ({"gpurack_object_store": {"namespace": "S3", "port": 443}}, "must be a DNS label"),
        (
            {"gpurack_object_store": {"cidrs": ["10.0.0.0/24"], "port": 1, "bucket": "x"}},
            "must be a mapping of",
        ),
        (
            {"gpurack_object_store": {"namespace": "s3", "port": 1, "teams": ["nobody"]}},
            "nobody not in gpurack_teams",
        ),
        ({"gpurack_priority_classes": [{"name": "a", "value": "high"}]}, "value must be a 32-bit integer"),
        ({"gpurack_priority_classes": [{"name": "a", "value": 1}] * 2}, "duplicate priority class 'a'"),
    ],
)
def test_site_from_hostvars_refuses_bad_settings(settings: dict[str, Any], message: str) -> None:
    assert message in _refused(None, **settings)


def test_site_from_hostvars_reports_every_problem_at_once() -> None:
    message = _refused([_team(name="Bad"), _team(priority="urgent")], gpurack_cohort="")
    assert "'Bad' must be a DNS label" in message
    assert "priority 'urgent'" in message
    assert "gpurack_cohort is required (a DNS subdomain" in message


def test_site_from_hostvars_refuses_a_bad_pool_and_disagreeing_hosts() -> None:
    found = hostvars()
    found["h100-a-02"]["gpurack_pool"]["taints"] = []
    found["h200-inf-01"]["gpurack_pool"]["wrkload"] = "batch"
    with pytest.raises(PlatformInputError) as caught:
        site_from_hostvars(found, sorted(found), site_vars())
    differ = "differ in workload, sharing, allocation or taints"
    assert f"pool h100-train-a: hosts h100-a-01 and h100-a-02 {differ}" in str(caught.value)
    assert "host h200-inf-01: gpurack_pool: pool: unknown key 'wrkload'" in str(caught.value)


def test_site_from_hostvars_takes_priority_classes_and_overcommit_from_settings() -> None:
    classes = [{"name": "low", "value": 1}, {"name": "high", "value": 9, "description": "urgent"}]
    teams = [_team(priority="high")]
    found = hostvars()
    result = site_from_hostvars(
        found,
        sorted(found),
        {"gpurack_teams": teams, "gpurack_priority_classes": classes, "gpurack_quota_overcommit": "yes"},
    )
    assert [(c.name, c.value) for c in result.priority_classes] == [("high", 9), ("low", 1)]
    assert result.overcommit is True
    assert result.cohort == "site"


def test_site_from_dict_refuses_what_is_not_a_site() -> None:
    with pytest.raises(PlatformInputError, match="site must be a mapping of pools and teams"):
        site_from_dict({"teams": []})
    bad = site().to_dict()
    bad["pools"][0]["gpus"] = -3
    with pytest.raises(PlatformInputError, match="is not a pool"):
        site_from_dict(bad)


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ("64", "64"),
        (8, "8"),
        ("1000m", "1"),
        ("1500m", "1500m"),
        ("2000", "2k"),
        ("2048Mi", "2Gi"),
        ("1536Gi", "1536Gi"),
        ("0.5Gi", "512Mi"),
        ("1e3", "1k"),
        ("0", "0"),
    ],
)
def test_quantity_canonical_matches_the_api_server(raw: Any, text: str) -> None:
    assert str(quantity.parse(raw)) == text


@pytest.mark.parametrize("raw", ["-1", "1.2.3", "12Gb", "", True, None, 1.5])
def test_quantity_parse_refuses_what_kubernetes_refuses(raw: Any) -> None:
    with pytest.raises(quantity.QuantityError):
        quantity.parse(raw)


def test_quantity_total_keeps_the_first_format() -> None:
    parts = [quantity.parse("1Gi"), quantity.parse("512Mi")]
    assert str(quantity.total(parts)) == "1536Mi"
    assert str(quantity.total([])) == "0"
