# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The conformance tests that run pods: Kueue's all-or-nothing admission of a gang, and what a
pod on a GPU node sees of the GPUs with and without asking for one. Each wait is bounded and
everything made is deleted, whatever the outcome."""

from __future__ import annotations

from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.job import QUEUE_LABEL
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.cluster import (
    ApiError,
    Cluster,
    poll,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.common import (
    CHECK_MODE_REASON,
    RUN_LABEL,
    Settings,
    api_failed,
    delete_quietly,
    items,
    meta_name,
    result,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.pods import (
    devices_in,
    pause_pod,
    probe_pod,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import CheckResult, Verdict

FITS, ALL_OR_NOTHING = "conformance.gang_scheduling.fits", "conformance.gang_scheduling.all_or_nothing"
NO_REQUEST = "conformance.secure_accelerator_access.no_request"
REQUEST = "conformance.secure_accelerator_access.request"
NO_PROBE = "no probe image set (conformance_probe_image: an image whose command lists /dev/nvidia*)"


def _both(ids: tuple[str, str], verdict: Verdict, reason: str) -> list[CheckResult]:
    """The two halves of one setup, with one verdict and reason (the setup could not run)."""
    return [result(i, verdict, reason) for i in ids]


def _both_failed(ids: tuple[str, str], doing: str, exc: ApiError) -> list[CheckResult]:
    return [api_failed(i, doing, exc) for i in ids]


def gang_job(settings: Settings, name: str, pods: int) -> dict[str, Any]:
    """An all-or-nothing Job of `pods` pause pods, each asking for the gang's GPUs, in the team's queue."""
    template = pause_pod(settings, name, settings.gang_gpus_per_pod, labels={"job-name": name})
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {QUEUE_LABEL: settings.queue, RUN_LABEL: settings.run}},
        "spec": {
            "suspend": True,
            "parallelism": pods,
            "completions": pods,
            "backoffLimit": 0,
            "template": {"metadata": {"labels": template["metadata"]["labels"]}, "spec": template["spec"]},
        },
    }


def _running(cluster: Cluster, settings: Settings, job: str) -> int:
    pods = items(cluster.get(f"/api/v1/namespaces/{settings.namespace}/pods?labelSelector=job-name%3D{job}"))
    return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running")


def gang(cluster: Cluster, settings: Settings) -> list[CheckResult]:
    """A gang that fits runs all its pods; one larger than the queue holds runs none."""
    if not settings.create:
        return _both((FITS, ALL_OR_NOTHING), Verdict.SKIP, CHECK_MODE_REASON)
    jobs = f"/apis/batch/v1/namespaces/{settings.namespace}/jobs"
    fit, unfit = settings.name("gang-fits"), settings.name("gang-unfit")
    try:
        return _gang(cluster, settings, jobs, fit, unfit)
    except ApiError as exc:
        return _both_failed((FITS, ALL_OR_NOTHING), "running the gang jobs", exc)
    finally:
        delete_quietly(cluster, f"{jobs}/{fit}", f"{jobs}/{unfit}")


def _gang(cluster: Cluster, settings: Settings, jobs: str, fit: str, unfit: str) -> list[CheckResult]:
    want, big = settings.gang_pods, settings.gang_unfit_pods
    cluster.create(jobs, gang_job(settings, fit, want))
    seen = poll(
        lambda: want if _running(cluster, settings, fit) >= want else None,
        settings.timeout_s,
        settings.every_s,
    )
    running = seen or _running(cluster, settings, fit)
    line = f"Job {fit}: {want} pods x {settings.gang_gpus_per_pod} {settings.gpu_resource}, {running} Running"
    fits = (
        result(FITS, Verdict.PASS, "", [line], measured=running, expected=want)
        if running >= want
        else result(
            FITS,
            Verdict.FAIL,
            f"{running} of {want} pods Running after {settings.timeout_s:g} s in queue {settings.queue}",
            [line],
            measured=running,
            expected=want,
        )
    )
    cluster.create(jobs, gang_job(settings, unfit, big))
    leaked = poll(lambda: _running(cluster, settings, unfit) or None, settings.hold_s, settings.every_s) or 0
    line = (
        f"Job {unfit}: {big} pods x {settings.gang_gpus_per_pod} {settings.gpu_resource}, "
        f"{leaked} Running after {settings.hold_s:g} s"
    )
    none = (
        result(ALL_OR_NOTHING, Verdict.PASS, "", [line], measured=0, expected=0)
        if not leaked
        else result(
            ALL_OR_NOTHING,
            Verdict.FAIL,
            f"{leaked} pods of a gang that cannot fit are Running",
            [line],
            measured=leaked,
            expected=0,
        )
    )
    return [fits, none]


def access(cluster: Cluster, settings: Settings) -> list[CheckResult]:
    """On a GPU node, a probe that asks for no GPU sees no GPU device; one that asks sees one."""
    if not settings.probe_image:
        return _both((NO_REQUEST, REQUEST), Verdict.SKIP, NO_PROBE)
    if not settings.create:
        return [
            result(NO_REQUEST, Verdict.SKIP, CHECK_MODE_REASON),
            result(REQUEST, Verdict.SKIP, CHECK_MODE_REASON),
        ]
    try:
        node = settings.probe_node or _gpu_node(cluster, settings.gpu_resource)
        if not node:
            return _both(
                (NO_REQUEST, REQUEST), Verdict.SKIP, f"no node has allocatable {settings.gpu_resource}"
            )
        without = _probe(cluster, settings, node, 0)
        given = _probe(cluster, settings, node, 1)
    except ApiError as exc:
        return [
            api_failed(NO_REQUEST, "running the probe pods", exc),
            api_failed(REQUEST, "running the probe pods", exc),
        ]
    return [_no_request(node, without), _request(node, given, without)]


def _no_request(node: str, seen: list[str] | None) -> CheckResult:
    if seen is None:
        return result(NO_REQUEST, Verdict.FAIL, f"the probe without a GPU on {node} did not finish")
    line = f"pod on {node} without a GPU request sees: {', '.join(seen) or 'no /dev/nvidia*'}"
    if seen:
        return result(NO_REQUEST, Verdict.FAIL, "a pod that asked for no GPU sees GPU devices", [line])
    return result(NO_REQUEST, Verdict.PASS, "", [line])


def _request(node: str, seen: list[str] | None, without: list[str] | None) -> CheckResult:
    if seen is None:
        return result(REQUEST, Verdict.FAIL, f"the probe with a GPU on {node} did not finish")
    line = f"pod with a GPU on {node} sees: {', '.join(seen) or 'no /dev/nvidia*'}"
    if not seen:
        # Without a device either way, absence proves nothing about isolation.
        return result(
            REQUEST,
            Verdict.SKIP,
            "a pod given a GPU saw no /dev/nvidia* either: the node's GPUs "
            "are not served by a device plugin (emulated), so isolation cannot be shown",
            [line],
        )
    return result(REQUEST, Verdict.PASS, "", [line], measured=len(seen))


def _gpu_node(cluster: Cluster, resource: str) -> str:
    for node in items(cluster.get("/api/v1/nodes")):
        if int(str(((node.get("status") or {}).get("allocatable") or {}).get(resource, "0")) or 0) > 0:
            return meta_name(node)
    return ""


def _probe(cluster: Cluster, settings: Settings, node: str, gpus: int) -> list[str] | None:
    """The device files the probe saw; None when it did not finish within the timeout."""
    name = settings.name(f"probe-{'gpu' if gpus else 'none'}")
    pods = f"/api/v1/namespaces/{settings.namespace}/pods"
    cluster.create(pods, probe_pod(settings, name, node, gpus))
    try:
        phase = poll(lambda: _finished(cluster, f"{pods}/{name}"), settings.timeout_s, settings.every_s)
        return devices_in(cluster.log(f"{pods}/{name}/log")) if phase == "Succeeded" else None
    finally:
        delete_quietly(cluster, f"{pods}/{name}")


def _finished(cluster: Cluster, path: str) -> str | None:
    phase = str(((cluster.get(path) or {}).get("status") or {}).get("phase") or "")
    return phase if phase in ("Succeeded", "Failed") else None
