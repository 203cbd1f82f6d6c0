"""The platform filters: platform_site (the site as a plain dict) and removed_team_objects; bad
input as AnsibleFilterError."""

from __future__ import annotations

import copy

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.filter.platform import (
    FilterModule,
    model_cache_dirs,
    platform_site,
    removed_inference_services,
    removed_team_objects,
    serving_target,
)
from platform_inputs import TEAMS, hostvars, site, site_vars


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


def test_filter_module_maps_its_filters() -> None:
    assert FilterModule().filters() == {
        "platform_site": platform_site,
        "removed_team_objects": removed_team_objects,
        "removed_inference_services": removed_inference_services,
        "model_cache_dirs": model_cache_dirs,
        "serving_target": serving_target,
    }


def test_model_cache_dirs_of_a_site_and_a_clear_error_for_anything_else() -> None:
    teams = copy.deepcopy(TEAMS)
    teams[1]["inference"] = [
        {"name": "embed", "pool": "h200-inference", "model": "s3://inference/m/", "resources": {"gpus": 1}}
    ]
    site = platform_site(hostvars(), sorted(hostvars()), site_vars(gpurack_teams=teams))
    assert [(d["host"], d["path"]) for d in model_cache_dirs(site)] == [
        ("h200-inf-01", "/var/lib/gpurack/model-cache/inference"),
        ("h200-inf-02", "/var/lib/gpurack/model-cache/inference"),
    ]
    for bad in ("site", {"pools": "x"}):
        with pytest.raises(AnsibleFilterError, match="model_cache_dirs"):
            model_cache_dirs(bad)  # type: ignore[arg-type]


def test_removed_inference_services_names_every_object_of_an_undeclared_service() -> None:
    ours = {"app.kubernetes.io/managed-by": "gpurack"}
    listed = [
        {
            "metadata": {
                "name": "embed",
                "namespace": "inference",
                "labels": {**ours, "gpurack.io/inference-service": "embed"},
            }
        },
        {
            "metadata": {
                "name": "old",
                "namespace": "inference",
                "labels": {**ours, "gpurack.io/inference-service": "old"},
            }
        },
        # Not gpurack's: never touched.
        {
            "metadata": {
                "name": "mine",
                "namespace": "inference",
                "labels": {"gpurack.io/inference-service": "mine"},
            }
        },
    ]
    site_dict = {"teams": [{"name": "inference", "inference": [{"name": "embed"}]}]}
    removed = removed_inference_services(listed, site_dict)
    assert [(o["kind"], o["namespace"], o["name"]) for o in removed] == [
        ("HorizontalPodAutoscaler", "inference", "old"),
        ("PodDisruptionBudget", "inference", "old"),
        ("Service", "inference", "old"),
        ("Deployment", "inference", "old"),
    ]
    with pytest.raises(AnsibleFilterError, match="expects a list of Kubernetes objects"):
        removed_inference_services(listed, {"teams": None})


def _listed(kind: str, name: str, labels: dict[str, str]) -> dict[str, object]:
    api_version = "v1" if kind == "Namespace" else "kueue.x-k8s.io/v1beta2"
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "labels": labels}}


def test_removed_team_objects_names_gpuracks_objects_of_teams_the_site_dropped() -> None:
    ours = {"app.kubernetes.io/managed-by": "gpurack"}
    listed = [
        _listed("ClusterQueue", "gone", {**ours, "gpurack.io/team": "gone"}),
        _listed("ClusterQueue", "research", {**ours, "gpurack.io/team": "research"}),
        _listed("Namespace", "gone", {**ours, "gpurack.io/team": "gone"}),
        # Not gpurack's (another manager, or no team label): never picked.
        _listed("Namespace", "theirs", {"app.kubernetes.io/managed-by": "helm", "gpurack.io/team": "theirs"}),
        _listed("Namespace", "gpurack-observability", ours),
        _listed("Namespace", "kube-system", {}),
    ]
    found = removed_team_objects(listed, site().to_dict())
    assert found == [
        {"api_version": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "name": "gone", "team": "gone"},
        {"api_version": "v1", "kind": "Namespace", "name": "gone", "team": "gone"},
    ]
    assert removed_team_objects(listed[1:2], site().to_dict()) == []


@pytest.mark.parametrize("objects, given", [("Namespace", {"teams": []}), ([], {}), ([], "site")])
def test_removed_team_objects_refuses_what_is_not_objects_and_a_site(objects: object, given: object) -> None:
    with pytest.raises(AnsibleFilterError, match="expects a list of Kubernetes objects and the site"):
        removed_team_objects(objects, given)  # type: ignore[arg-type]


def test_serving_target_names_what_there_is() -> None:
    teams = copy.deepcopy(TEAMS)
    teams[1]["inference"] = [
        {"name": "embed", "pool": "h200-inference", "model": "s3://inference/m/", "resources": {"gpus": 1}}
    ]
    site = platform_site(hostvars(), sorted(hostvars()), site_vars(gpurack_teams=teams))
    assert serving_target(site, "inference", "embed")["url"] == "http://embed.inference.svc"
    with pytest.raises(
        AnsibleFilterError, match="serving_target: team inference has no inference service 'chat'"
    ):
        serving_target(site, "inference", "chat")
    with pytest.raises(AnsibleFilterError, match="expects the site"):
        serving_target("site", "inference", "embed")  # type: ignore[arg-type]
