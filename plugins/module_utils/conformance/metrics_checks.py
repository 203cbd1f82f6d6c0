# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The conformance tests read from metrics: the inference HPA's custom metric, the workloads
Prometheus discovered, and the accelerators' DCGM series. Nothing is created."""

from __future__ import annotations

from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.cluster import ApiError, Cluster
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.common import (
    Settings,
    api_failed,
    conditions,
    items,
    meta_name,
    result,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import CheckResult, Verdict

CUSTOM_METRICS = "/apis/custom.metrics.k8s.io/v1beta1"
GPU_METRICS = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED")
SCALES_REASON = (
    "scaling 1 -> N -> 1 under load is exercised by `gpurack accept --inference` (row "
    "infer.autoscale), not in this run"
)


def custom_metric(cluster: Cluster, settings: Settings) -> CheckResult:
    """An HPA on a Pods or Object metric is ScalingActive, for a Deployment whose pods ask for GPUs,
    and custom.metrics.k8s.io is served."""
    test = "conformance.pod_autoscaling.custom_metric"
    try:
        hpas = items(cluster.get("/apis/autoscaling/v2/horizontalpodautoscalers"))
        served = cluster.get(CUSTOM_METRICS)
    except ApiError as exc:
        return api_failed(test, "reading the HorizontalPodAutoscalers", exc)
    custom = [h for h in hpas if any(m.get("type") in ("Pods", "Object") for m in _metrics(h))]
    if not custom:
        return result(
            test,
            Verdict.SKIP,
            "no HorizontalPodAutoscaler on a custom metric in the cluster "
            "(no inference service declared): nothing to test",
        )
    lines = [f"{CUSTOM_METRICS}: {'served' if served is not None else 'not served'}"]
    on_gpus = 0
    for hpa in custom:
        ns, name = (hpa.get("metadata") or {}).get("namespace", ""), meta_name(hpa)
        gpus = _target_gpus(cluster, ns, hpa, settings.gpu_resource)
        active = conditions(hpa).get("ScalingActive")
        lines.append(f"HPA {ns}/{name}: ScalingActive={active}, target pods ask for {gpus} GPU(s)")
        on_gpus += bool(gpus)
        if served is not None and active == "True" and gpus:
            return result(test, Verdict.PASS, "", lines)
    if not on_gpus:
        # The requirement is about pods that use accelerators: an HPA of CPU pods (the lab's model
        # server) proves nothing about them, either way.
        why = "every custom-metric HPA scales pods that ask for no GPU: the accelerator case is not tested"
        return result(test, Verdict.SKIP, why, lines)
    return result(
        test,
        Verdict.FAIL,
        "no custom-metric HPA of a GPU workload is ScalingActive with custom.metrics.k8s.io served",
        lines,
    )


def _metrics(hpa: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in (hpa.get("spec") or {}).get("metrics") or [] if isinstance(m, dict)]


def _target_gpus(cluster: Cluster, namespace: str, hpa: dict[str, Any], resource: str) -> int:
    ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
    if ref.get("kind") != "Deployment":
        return 0
    try:
        target = cluster.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/{ref.get('name')}") or {}
    except ApiError:
        return 0
    containers = (
        (((target.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")
    ) or []
    return sum(
        int(((c.get("resources") or {}).get("limits") or {}).get(resource, 0) or 0) for c in containers
    )


def scales(cluster: Cluster, settings: Settings) -> CheckResult:
    """Not run here: the scaling itself is the inference acceptance test's."""
    return result("conformance.pod_autoscaling.scales", Verdict.SKIP, SCALES_REASON)


def discovered(cluster: Cluster, settings: Settings) -> CheckResult:
    """Prometheus discovered at least one workload pod (its scrape job) and scrapes it (up == 1)."""
    test = "conformance.ai_service_metrics.discovered"
    try:
        series = cluster.query(f'up{{job="{settings.workload_job}"}}')
    except ApiError as exc:
        return result(test, Verdict.SKIP, f"Prometheus could not be asked: {exc}")
    up = [s for s in series if str((s.get("value") or [None, "0"])[1]) == "1"]
    lines = [f"{_labels(s)} up={(s.get('value') or [None, '?'])[1]}" for s in series]
    if not series:
        return result(
            test,
            Verdict.SKIP,
            f"Prometheus has no target of job {settings.workload_job!r} "
            "(no inference service declared): nothing discovered to test",
        )
    if not up:
        return result(test, Verdict.FAIL, f"{len(series)} discovered workload target(s), none up", lines)
    return result(test, Verdict.PASS, "", lines, measured=len(up))


def _labels(sample: dict[str, Any]) -> str:
    labels = sample.get("metric") or {}
    return ", ".join(f"{k}={labels[k]}" for k in ("job", "namespace", "pod") if k in labels)


def dcgm(cluster: Cluster, settings: Settings) -> CheckResult:
    """Prometheus holds per-GPU utilization and memory series of NVIDIA's DCGM exporter."""
    test = "conformance.accelerator_metrics.dcgm"
    lines, missing = [], []
    for metric in GPU_METRICS:
        try:
            series = cluster.query(metric)
        except ApiError as exc:
            return result(test, Verdict.SKIP, f"Prometheus could not be asked: {exc}")
        lines.append(f"{metric}: {len(series)} series")
        if not series:
            missing.append(metric)
    if len(missing) == len(GPU_METRICS):
        return result(
            test,
            Verdict.SKIP,
            "no DCGM exporter series in Prometheus (the GPU Operator's "
            "DCGM exporter is not running or not scraped): nothing to test",
            lines,
        )
    if missing:
        return result(test, Verdict.FAIL, f"DCGM series missing: {', '.join(missing)}", lines)
    return result(test, Verdict.PASS, "", lines)
