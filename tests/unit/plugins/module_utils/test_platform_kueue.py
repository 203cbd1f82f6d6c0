"""kueue_objects, field by field, and each object against Kueue v0.17.0's own CRD schema.

The CRDs come from the Go module cache that lab/k8s-build fills (sigs.k8s.io/kueue@v0.17.0,
config/components/crd/bases); the schema tests skip with the path when it is absent. Every
object schema is made strict (no unknown fields): the API server would silently prune a
misspelt field, so jsonschema must refuse it here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.kueue import (
    API_VERSION,
    kueue_objects,
)
from platform_inputs import kueue_crd_dir, site

CRD_FILES = {
    "ResourceFlavor": "kueue.x-k8s.io_resourceflavors.yaml",
    "ClusterQueue": "kueue.x-k8s.io_clusterqueues.yaml",
    "LocalQueue": "kueue.x-k8s.io_localqueues.yaml",
    "WorkloadPriorityClass": "kueue.x-k8s.io_workloadpriorityclasses.yaml",
}


def _by(kind: str, objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def _strict(schema: Any) -> Any:
    """The schema with additionalProperties false wherever it lists properties."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if "properties" in schema and "additionalProperties" not in schema:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def _schema(kind: str) -> dict[str, Any]:
    path = kueue_crd_dir() / CRD_FILES[kind]
    if not path.is_file():
        pytest.skip(f"Kueue v0.17.0 CRDs not downloaded ({path}): run lab/k8s-build to fetch the module")
    crd = yaml.safe_load(path.read_text(encoding="utf-8"))
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == API_VERSION.split("/")[1]]
    assert version["served"] and version["storage"], f"{kind} {API_VERSION} is not Kueue's storage version"
    schema: dict[str, Any] = _strict(version["schema"]["openAPIV3Schema"])
    return schema


def test_kueue_objects_come_in_apply_order() -> None:
    kinds = [(o["kind"], o["metadata"]["name"]) for o in kueue_objects(site())]
    assert kinds == [
        ("WorkloadPriorityClass", "inference"),
        ("WorkloadPriorityClass", "training"),
        ("WorkloadPriorityClass", "batch"),
        ("ResourceFlavor", "h100-train-a"),
        ("ResourceFlavor", "h200-inference"),
        ("ClusterQueue", "inference"),
        ("ClusterQueue", "research"),
        ("LocalQueue", "inference"),
        ("LocalQueue", "research"),
    ]
    assert all(o["apiVersion"] == "kueue.x-k8s.io/v1beta2" for o in kueue_objects(site()))
    assert all(
        o["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpurack" for o in kueue_objects(site())
    )


def test_resource_flavor_selects_the_pool_and_tolerates_only_its_taints() -> None:
    flavors = _by("ResourceFlavor", kueue_objects(site()))
    assert flavors["h100-train-a"]["spec"] == {
        "nodeLabels": {"gpurack.io/pool": "h100-train-a"},
        "tolerations": [
            {"key": "gpurack.io/pool", "operator": "Equal", "value": "h100-train-a", "effect": "NoSchedule"}
        ],
    }
    assert flavors["h200-inference"]["spec"] == {"nodeLabels": {"gpurack.io/pool": "h200-inference"}}


def test_cluster_queue_has_quota_limits_preemption_and_its_namespace() -> None:
    queues = _by("ClusterQueue", kueue_objects(site()))
    spec = queues["inference"]["spec"]
    assert spec["cohortName"] == "site"
    assert spec["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "inference"}}
    assert spec["preemption"] == {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
    assert spec["queueingStrategy"] == "BestEffortFIFO"
    (group,) = spec["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]
    assert group["flavors"] == [
        {
            "name": "h100-train-a",
            "resources": [
                {"name": "cpu", "nominalQuota": "32"},
                {"name": "memory", "nominalQuota": "256Gi"},
                {"name": "nvidia.com/gpu", "nominalQuota": "4", "lendingLimit": "2"},
            ],
        },
        # An inference pool's quota is never lent: no training queue borrows serving capacity.
        {
            "name": "h200-inference",
            "resources": [
                {"name": "cpu", "nominalQuota": "500m", "lendingLimit": "0"},
                {"name": "memory", "nominalQuota": "2Gi", "lendingLimit": "0"},
                {"name": "nvidia.com/gpu", "nominalQuota": "2", "lendingLimit": "0"},
            ],
        },
    ]
    research = queues["research"]
    assert research["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2] == {
        "name": "nvidia.com/gpu",
        "nominalQuota": "12",
        "borrowingLimit": "4",
    }
    assert research["metadata"]["labels"]["gpurack.io/priority-class"] == "training"
    assert research["metadata"]["labels"]["gpurack.io/team"] == "research"


def test_local_queue_points_at_the_team_queue_in_its_namespace() -> None:
    queue = _by("LocalQueue", kueue_objects(site()))["research"]
    assert queue["metadata"]["namespace"] == "research"
    assert queue["spec"] == {"clusterQueue": "research"}


def test_priority_classes_default_and_can_be_replaced() -> None:
    classes = _by("WorkloadPriorityClass", kueue_objects(site()))
    assert {n: c["value"] for n, c in classes.items()} == {"inference": 10000, "training": 1000, "batch": 100}
    custom = site(
        gpurack_teams=[],
        gpurack_priority_classes=[{"name": "urgent", "value": 50, "description": "now"}],
    )
    (only,) = _by("WorkloadPriorityClass", kueue_objects(custom)).values()
    assert (only["metadata"]["name"], only["value"], only["description"]) == ("urgent", 50, "now")


@pytest.mark.parametrize("kind", sorted(CRD_FILES))
def test_kueue_objects_follow_the_v0_17_crd_schema(kind: str) -> None:
    schema = _schema(kind)
    objects = [o for o in kueue_objects(site()) if o["kind"] == kind]
    assert objects
    for item in objects:
        jsonschema.validate(item, schema)


def test_the_strict_crd_schema_refuses_a_misspelt_field() -> None:
    schema = _schema("ClusterQueue")
    queue = _by("ClusterQueue", kueue_objects(site()))["research"]
    queue["spec"]["cohort"] = queue["spec"].pop("cohortName")  # v1beta1's name
    with pytest.raises(jsonschema.ValidationError, match="cohort"):
        jsonschema.validate(queue, schema)


def test_cluster_queue_meets_the_crd_rules_jsonschema_cannot_check() -> None:
    """The CEL rules of ClusterQueueSpec and ResourceGroup (x-kubernetes-validations)."""
    for queue in _by("ClusterQueue", kueue_objects(site())).values():
        spec = queue["spec"]
        for group in spec["resourceGroups"]:
            # flavors must have the same number of resources as the coveredResources, in that order
            for flavor in group["flavors"]:
                assert [r["name"] for r in flavor["resources"]] == group["coveredResources"]
        # borrowingLimit must be nil when cohort is empty
        assert spec["cohortName"]


def test_crd_files_name_the_kinds_we_build() -> None:
    path = kueue_crd_dir()
    if not path.is_dir():
        pytest.skip(f"Kueue v0.17.0 CRDs not downloaded ({path})")
    for kind, name in CRD_FILES.items():
        crd = yaml.safe_load((Path(path) / name).read_text(encoding="utf-8"))
        assert crd["spec"]["names"]["kind"] == kind
        assert crd["spec"]["scope"] == ("Namespaced" if kind == "LocalQueue" else "Cluster")
