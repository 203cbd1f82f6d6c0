"""The AI conformance catalog, its tests against a fake cluster (each made to fail), the status
rule and the evidence writers (module_utils/conformance)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance import (
    BY_ID,
    CATALOG,
    CATEGORIES,
    IMPLEMENTED,
    NOT_APPLICABLE,
    NOT_IMPLEMENTED,
    PARTIAL,
    STATUSES,
    TESTS,
    ApiError,
    evidence_page,
    junit,
    product,
    run,
    status_of,
)
from conformance_fakes import FakeCluster, settings

# The v1.35 checklist of cncf/k8s-ai-conformance (docs/AIConformance-1.35.yaml): id -> category, level.
PROGRAM = {
    "dra_support": ("accelerators", "MUST"),
    "driver_runtime_management": ("accelerators", "SHOULD"),
    "gpu_sharing": ("accelerators", "SHOULD"),
    "virtualized_accelerator": ("accelerators", "SHOULD"),
    "ai_inference": ("networking", "MUST"),
    "gang_scheduling": ("schedulingOrchestration", "MUST"),
    "cluster_autoscaling": ("schedulingOrchestration", "MUST"),
    "pod_autoscaling": ("schedulingOrchestration", "MUST"),
    "accelerator_metrics": ("observability", "MUST"),
    "ai_service_metrics": ("observability", "MUST"),
    "secure_accelerator_access": ("security", "MUST"),
    "robust_controller": ("operator", "MUST"),
}
ALWAYS_SKIPPED = {"conformance.pod_autoscaling.scales"}


def _by_id(results: list[Any]) -> dict[str, Any]:
    return {r.id: r for r in results}


def test_catalog_matches_the_program_ids_categories_and_levels() -> None:
    assert {r.id: (r.category, r.level) for r in CATALOG} == PROGRAM
    assert [r.category for r in CATALOG] == sorted((r.category for r in CATALOG), key=CATEGORIES.index)


def test_catalog_every_requirement_has_tests_or_says_why_not() -> None:
    for requirement in CATALOG:
        assert requirement.description and requirement.how, requirement.id
        assert bool(requirement.tests) != bool(requirement.untested), requirement.id


def test_suite_runs_every_catalogued_test_once() -> None:
    run_ids = [i for _, ids in TESTS for i in ids]
    assert sorted(run_ids) == sorted(t for r in CATALOG for t in r.tests)


def test_run_on_a_working_cluster_passes_every_test_and_skips_the_untested() -> None:
    results = _by_id(run(FakeCluster(), settings()))
    for requirement in CATALOG:
        for test in requirement.tests:
            expected = "skip" if test in ALWAYS_SKIPPED else "pass"
            assert results[test].verdict.value == expected, (test, results[test].reason)
            assert results[test].component == requirement.id and results[test].tier == "conformance"
        if not requirement.tests:
            assert results[f"conformance.{requirement.id}"].verdict.value == "skip"


def test_run_deletes_everything_it_created() -> None:
    cluster = FakeCluster()
    run(cluster, settings())
    made = [f"{path}/{body['metadata']['name']}" for path, body, dry in cluster.created if not dry]
    assert made and set(made) <= set(cluster.deleted)


def test_run_in_check_mode_creates_nothing_and_skips_what_would() -> None:
    cluster = FakeCluster()
    results = _by_id(run(cluster, settings(create=False)))
    assert all(dry for _, _, dry in cluster.created)
    creating = (
        "gang_scheduling.fits",
        "robust_controller.reconciles",
        "secure_accelerator_access.no_request",
    )
    for test in (f"conformance.{t}" for t in (*creating, "dra_support.allocation")):
        assert results[test].verdict.value == "skip" and "check mode" in results[test].reason


def _refuse(method: str, fragment: str) -> Callable[[str, str], ApiError | None]:
    def fail_on(m: str, path: str) -> ApiError | None:
        return ApiError(500, "boom") if m == method and fragment in path else None

    return fail_on


# Each automated test and a cluster that makes it fail.
FAILING: dict[str, dict[str, Any]] = {
    "conformance.dra_support.api": {"paths": {"/apis/resource.k8s.io/v1": {"resources": [{"name": "pods"}]}}},
    "conformance.dra_support.allocation": {"fail_on": _refuse("GET", "/resourceclaims/")},
    "conformance.gang_scheduling.fits": {"running": {"gang-fits": 1}},
    "conformance.gang_scheduling.all_or_nothing": {"running": {"gang-unfit": 3}},
    "conformance.pod_autoscaling.custom_metric": {"paths": {"/apis/custom.metrics.k8s.io/v1beta1": None}},
    "conformance.accelerator_metrics.dcgm": {"series": {"DCGM_FI_DEV_FB_USED": []}},
    "conformance.ai_service_metrics.discovered": {
        "series": {'up{job="inference"}': [{"metric": {"job": "inference"}, "value": [0, "0"]}]}
    },
    "conformance.secure_accelerator_access.no_request": {"probe_logs": {"none": "/dev/nvidia0\n", "gpu": ""}},
    "conformance.secure_accelerator_access.request": {"probe_phase": "Failed"},
    "conformance.robust_controller.webhook": {"refuse_bad_queue": False},
    "conformance.robust_controller.reconciles": {"fail_on": _refuse("POST", "/localqueues")},
}  # fmt: skip


def test_every_automated_test_has_a_way_to_fail() -> None:
    automated = {t for r in CATALOG for t in r.tests} - ALWAYS_SKIPPED
    assert set(FAILING) == automated


@pytest.mark.parametrize("test_id", sorted(FAILING))
def test_each_automated_test_can_fail(test_id: str) -> None:
    results = _by_id(run(FakeCluster(**FAILING[test_id]), settings()))
    assert results[test_id].verdict.value == "fail", results[test_id]
    assert results[test_id].reason and results[test_id].remediation
    requirement = BY_ID[results[test_id].component]
    found = status_of(requirement, [r.to_dict() for r in results.values()])
    assert found.status == NOT_IMPLEMENTED and found.notes.startswith("FAILED: ")


def test_webhook_defaulting_fails_when_kueue_leaves_a_queued_job_running() -> None:
    results = _by_id(run(FakeCluster(suspend_queued=False), settings(), ("robust_controller",)))
    assert results["conformance.robust_controller.webhook"].verdict.value == "fail"
    assert "suspend" in results["conformance.robust_controller.webhook"].reason


def test_what_cannot_be_tested_here_skips_with_why() -> None:
    cluster = FakeCluster(
        paths={"/apis/resource.k8s.io/v1/deviceclasses": {"items": []},
               "/apis/autoscaling/v2/horizontalpodautoscalers": {"items": []}},
        probe_logs={"none": "", "gpu": ""},
        series={'up{job="inference"}': [], "DCGM_FI_DEV_GPU_UTIL": [], "DCGM_FI_DEV_FB_USED": []},
    )  # fmt: skip
    results = _by_id(run(cluster, settings()))
    reasons = {
        "conformance.dra_support.allocation": "no DeviceClass",
        "conformance.pod_autoscaling.custom_metric": "no HorizontalPodAutoscaler",
        "conformance.accelerator_metrics.dcgm": "no DCGM exporter series",
        "conformance.ai_service_metrics.discovered": "no target",
        "conformance.secure_accelerator_access.request": "not served by a device plugin",
    }
    for test, why in reasons.items():
        assert results[test].verdict.value == "skip" and why in results[test].reason, results[test]
    assert results["conformance.secure_accelerator_access.no_request"].verdict.value == "pass"


def test_without_a_probe_image_secure_access_is_not_tested() -> None:
    results = _by_id(run(FakeCluster(), settings(probe_image="")))
    assert results["conformance.secure_accelerator_access.no_request"].verdict.value == "skip"


def _result(test_id: str, verdict: str, reason: str = "") -> dict[str, Any]:
    return {"id": test_id, "component": test_id.split(".")[1], "verdict": verdict, "reason": reason}


@pytest.mark.parametrize(
    ("verdicts", "status"),
    [
        (("pass", "pass"), IMPLEMENTED),
        (("pass", "skip"), PARTIAL),
        (("skip", "skip"), NOT_IMPLEMENTED),
        (("pass", "fail"), NOT_IMPLEMENTED),
        (("fail", "skip"), NOT_IMPLEMENTED),
        (("pass",), PARTIAL),  # the other test did not run at all
        ((), NOT_IMPLEMENTED),
    ],
)
def test_status_is_implemented_only_when_every_test_ran_and_passed(
    verdicts: tuple[str, ...], status: str
) -> None:
    tests = BY_ID["gang_scheduling"].tests
    results = [_result(t, v, f"why {t}") for t, v in zip(tests, verdicts, strict=False)]
    found = status_of(BY_ID["gang_scheduling"], results)
    assert found.status == status
    assert found.status in STATUSES
    if status != IMPLEMENTED:
        assert found.notes
    assert bool(found.evidence) == any(v != "skip" for v in verdicts)


def test_untested_requirements_are_not_implemented_or_not_applicable_with_notes() -> None:
    assert status_of(BY_ID["ai_inference"], []).status == NOT_IMPLEMENTED
    assert "Gateway API" in status_of(BY_ID["ai_inference"], []).notes
    assert status_of(BY_ID["cluster_autoscaling"], []).status == NOT_APPLICABLE
    assert status_of(BY_ID["cluster_autoscaling"], []).notes


def test_product_has_the_checklist_shape() -> None:
    results = [r.to_dict() for r in run(FakeCluster(), settings())]
    doc = product(results, {"platformName": "gpurack", "kubernetesVersion": "v1.36.3"})
    assert doc["metadata"]["kubernetesVersion"] == "v1.36.3"
    assert list(doc["spec"]) == list(CATEGORIES)
    entries = [e for category in doc["spec"].values() for e in category]
    assert [e["id"] for e in entries] == [r.id for r in CATALOG]
    for entry in entries:
        assert list(entry) == ["id", "description", "level", "status", "evidence", "notes"]
        assert entry["status"] in STATUSES
        if entry["status"] == IMPLEMENTED:
            assert entry["evidence"] == ["junit.xml", f"evidence/{entry['id']}.md"]
    assert {e["id"]: e["status"] for e in entries}["gang_scheduling"] == IMPLEMENTED
    assert {e["id"]: e["status"] for e in entries}["pod_autoscaling"] == PARTIAL


def test_junit_parses_back_with_a_failure_and_skips() -> None:
    results = [r.to_dict() for r in run(FakeCluster(running={"gang-fits": 0}), settings())]
    root = ET.fromstring(junit(results, "2026-12-05T10:00:00+00:00"))
    suite = root.find("testsuite")
    assert suite is not None and suite.get("timestamp") == "2026-12-05T10:00:00+00:00"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert len(cases) == len(results) == int(suite.get("tests") or 0)
    failure = cases["conformance.gang_scheduling.fits"].find("failure")
    assert failure is not None and "0 of 2 pods Running" in (failure.get("message") or "")
    assert int(suite.get("failures") or 0) == 1
    assert cases["conformance.ai_inference"].find("skipped") is not None
    assert cases["conformance.dra_support.api"].find("failure") is None
    assert cases["conformance.dra_support.api"].get("classname") == "dra_support"


def test_evidence_page_indents_cluster_text() -> None:
    results = [r.to_dict() for r in run(FakeCluster(), settings(), ("gang_scheduling",))]
    page = evidence_page(status_of(BY_ID["gang_scheduling"], results), results)
    assert page.startswith("# gang_scheduling (MUST): Implemented")
    assert "    Job conformance-1-gang-fits: 2 pods" in page


def test_dra_allocation_claims_a_pool_class_the_team_may_use_on_its_pool() -> None:
    classes = [
        {"metadata": {"name": n}} for n in ("gpu.nvidia.com", "lab-dra.gpurack.io", "other.gpurack.io")
    ]
    quota = {"spec": {"hard": {"other.gpurack.io.deviceclass.resource.k8s.io/devices": "0"}}}
    cluster = FakeCluster(
        paths={"/apis/resource.k8s.io/v1/deviceclasses": {"items": classes},
               "/api/v1/namespaces/alpha/resourcequotas": {"items": [quota]}},
    )  # fmt: skip
    results = _by_id(run(cluster, settings(), ("dra_support",)))
    assert results["conformance.dra_support.allocation"].verdict.value == "pass"
    claim = next(b for p, b, _ in cluster.created if p.endswith("/resourceclaims"))
    pod = next(b for p, b, _ in cluster.created if p.endswith("/pods"))
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "lab-dra.gpurack.io"
    assert pod["spec"]["nodeSelector"] == {"gpurack.io/pool": "lab-dra"}


def test_dra_allocation_skips_when_the_team_may_claim_no_class() -> None:
    quota = {"spec": {"hard": {"gpu.example.com.deviceclass.resource.k8s.io/devices": "0"}}}
    cluster = FakeCluster(paths={"/api/v1/namespaces/alpha/resourcequotas": {"items": [quota]}})
    results = _by_id(run(cluster, settings(), ("dra_support",)))
    found = results["conformance.dra_support.allocation"]
    assert found.verdict.value == "skip" and "quota of namespace alpha" in found.reason


def test_webhook_fails_when_the_refusal_is_not_a_webhook_s() -> None:
    def fail_on(method: str, path: str) -> ApiError | None:
        return (
            ApiError(422, "Job is invalid: spec.template: Required value") if path.endswith("/jobs") else None
        )

    results = _by_id(run(FakeCluster(fail_on=fail_on), settings(), ("robust_controller",)))
    found = results["conformance.robust_controller.webhook"]
    assert found.verdict.value == "fail" and "not by a webhook" in found.reason


def test_an_hpa_of_pods_without_gpus_leaves_the_accelerator_case_untested() -> None:
    """The lab's model server runs on CPUs: its HPA scales, but says nothing about GPU pods."""
    cpu_only = {"spec": {"template": {"spec": {"containers": [{"resources": {"limits": {"cpu": "1"}}}]}}}}
    cluster = FakeCluster(paths={"/apis/apps/v1/namespaces/beta/deployments/embed": cpu_only})
    test = "conformance.pod_autoscaling.custom_metric"
    found = _by_id(run(cluster, settings(), ("pod_autoscaling",)))[test]
    assert found.verdict.value == "skip" and "ask for no GPU" in found.reason, found
    shown = "ScalingActive=True, target pods ask for 0 GPU(s)"
    assert any(shown in line for line in found.evidence.lines), found
