# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The conformance tests that read the API and Prometheus, or write only through a dry run or
one small object: DRA, Kueue's webhook and reconciler, the HPA's custom metric, the metrics."""

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
    conditions,
    delete_quietly,
    items,
    meta_name,
    result,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.pods import pause_pod
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.dra import (
    CLASS_SUFFIX,
    PER_CLASS_QUOTA,
    POOL_LABEL,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import CheckResult, Verdict

DRA = "/apis/resource.k8s.io/v1"
DRA_KINDS = ("deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices")
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
# Kueue's job webhook refuses a queue name that is not a DNS subdomain; the API server's own
# label validation lets this one through (upper case and underscore are valid in a label value).
BAD_QUEUE_NAME = "Not_A_Queue"


def dra_api(cluster: Cluster, settings: Settings) -> CheckResult:
    """resource.k8s.io/v1 is served with the four DRA kinds."""
    test = "conformance.dra_support.api"
    try:
        group = cluster.get(DRA)
    except ApiError as exc:
        return api_failed(test, f"reading {DRA}", exc)
    served = sorted(str(r.get("name")) for r in (group or {}).get("resources") or [])
    missing = [k for k in DRA_KINDS if k not in served]
    lines = [f"GET {DRA}: {', '.join(n for n in served if '/' not in n) or 'not served'}"]
    if group is None or missing:
        why = "not served" if group is None else f"lacks {', '.join(missing)}"
        return result(test, Verdict.FAIL, f"{DRA} {why}", lines, measured=len(served) - len(missing))
    return result(test, Verdict.PASS, "", lines, measured=len(DRA_KINDS), expected=len(DRA_KINDS))


def dra_allocation(cluster: Cluster, settings: Settings) -> CheckResult:
    """A ResourceClaim on a DeviceClass the team may claim from is allocated once a pod uses it."""
    test = "conformance.dra_support.allocation"
    try:
        classes = [meta_name(c) for c in items(cluster.get(f"{DRA}/deviceclasses"))]
        allowed = _claimable(cluster, settings.namespace, classes)
    except ApiError as exc:
        return api_failed(test, "listing DeviceClasses and the team's quotas", exc)
    if not classes:
        return result(
            test,
            Verdict.SKIP,
            "no DeviceClass in the cluster (no pool with allocation: dra, "
            "no DRA driver installed): nothing to allocate",
        )
    if not allowed:
        return result(
            test,
            Verdict.SKIP,
            f"the quota of namespace {settings.namespace} allows no device of "
            f"{', '.join(classes)}: run with a team that has quota on a dra pool",
        )
    if not settings.create:
        return result(test, Verdict.SKIP, CHECK_MODE_REASON)
    chosen = allowed[0]
    claim_name, pod_name = settings.name("dra-claim"), settings.name("dra-pod")
    claims = f"{DRA}/namespaces/{settings.namespace}/resourceclaims"
    pods = f"/api/v1/namespaces/{settings.namespace}/pods"
    try:
        cluster.create(claims, _claim(settings, claim_name, chosen))
        cluster.create(pods, _claim_pod(settings, pod_name, claim_name, chosen))
        allocated = poll(
            lambda: _allocation(cluster, f"{claims}/{claim_name}"), settings.timeout_s, settings.every_s
        )
    except ApiError as exc:
        return api_failed(test, f"claiming a device of class {chosen}", exc)
    finally:
        delete_quietly(cluster, f"{pods}/{pod_name}", f"{claims}/{claim_name}")
    lines = [
        f"DeviceClasses: {', '.join(classes)}",
        f"ResourceClaim {claim_name} on {chosen}: {allocated or 'not allocated'}",
    ]
    if not allocated:
        why = f"the claim on {chosen} was not allocated within {settings.timeout_s:g} s"
        return result(test, Verdict.FAIL, why, lines)
    return result(test, Verdict.PASS, "", lines)


def _claimable(cluster: Cluster, namespace: str, classes: list[str]) -> list[str]:
    """The classes the namespace's ResourceQuotas let it claim from (all when no quota names one),
    gpurack's pool classes (`<pool>.gpurack.io`) first."""
    quotas = items(cluster.get(f"/api/v1/namespaces/{namespace}/resourcequotas"))
    hard: dict[str, str] = {}
    for quota in quotas:
        hard.update((quota.get("spec") or {}).get("hard") or {})
    allowed = [c for c in classes if str(hard.get(f"{c}{PER_CLASS_QUOTA}", "1")) not in ("0", "")]
    return sorted(allowed, key=lambda c: (not c.endswith(CLASS_SUFFIX), c))


def _claim(settings: Settings, name: str, device_class: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "labels": {RUN_LABEL: settings.run}},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": device_class}}]}},
    }


def _claim_pod(settings: Settings, name: str, claim: str, device_class: str) -> dict[str, Any]:
    """The pause pod that uses the claim, tolerating every taint; on the pool of a gpurack pool class."""
    pod = pause_pod(settings, name, claim=claim)
    pod["spec"]["tolerations"] = [{"operator": "Exists"}]
    if device_class.endswith(CLASS_SUFFIX):
        pod["spec"]["nodeSelector"] = {POOL_LABEL: device_class.removesuffix(CLASS_SUFFIX)}
    return pod


def _allocation(cluster: Cluster, path: str) -> str | None:
    claim = cluster.get(path) or {}
    results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")
    if not results:
        return None
    return ", ".join(f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}" for r in results)


def webhook(cluster: Cluster, settings: Settings) -> CheckResult:
    """Kueue's webhook refuses a Job with an invalid queue name and suspends a valid one (dry run)."""
    test = "conformance.robust_controller.webhook"
    jobs = f"/apis/batch/v1/namespaces/{settings.namespace}/jobs"
    bad = _job(settings, settings.name("webhook-bad"), BAD_QUEUE_NAME)
    good = _job(settings, settings.name("webhook-good"), settings.queue)
    lines = []
    try:
        cluster.create(jobs, bad, dry_run=True)
        return result(
            test,
            Verdict.FAIL,
            f"a Job with queue name {BAD_QUEUE_NAME!r} was accepted: "
            "Kueue's validating webhook did not answer",
        )
    except ApiError as exc:
        lines.append(f"dry-run Job with queue {BAD_QUEUE_NAME}: refused, {exc}")
        # The API server words every webhook denial `admission webhook "<name>" denied the request`.
        if exc.status not in (400, 403, 422) or "admission webhook" not in exc.message:
            return result(
                test, Verdict.FAIL, f"the invalid Job was refused, but not by a webhook: {exc}", lines
            )
    try:
        defaulted = cluster.create(jobs, good, dry_run=True)
    except ApiError as exc:
        return api_failed(test, f"dry-run of a Job for queue {settings.queue}", exc)
    suspended = bool((defaulted.get("spec") or {}).get("suspend"))
    lines.append(f"dry-run Job with queue {settings.queue}, suspend false: came back suspend {suspended}")
    if not suspended:
        return result(test, Verdict.FAIL, "Kueue's defaulting webhook did not suspend a queued Job", lines)
    return result(test, Verdict.PASS, "", lines)


def _job(settings: Settings, name: str, queue: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {QUEUE_LABEL: queue, RUN_LABEL: settings.run}},
        "spec": {"suspend": False, "template": {"spec": pause_pod(settings, name)["spec"]}},
    }


def reconciles(cluster: Cluster, settings: Settings) -> CheckResult:
    """A LocalQueue given to Kueue for the team's ClusterQueue becomes Active."""
    test = "conformance.robust_controller.reconciles"
    if not settings.create:
        return result(test, Verdict.SKIP, CHECK_MODE_REASON)
    name = settings.name("queue")
    path = f"{KUEUE}/namespaces/{settings.namespace}/localqueues"
    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": name, "labels": {RUN_LABEL: settings.run}},
        "spec": {"clusterQueue": settings.cluster_queue},
    }
    try:
        cluster.create(path, queue)
        active = poll(lambda: _active(cluster, f"{path}/{name}"), settings.timeout_s, settings.every_s)
    except ApiError as exc:
        return api_failed(test, f"creating LocalQueue {name}", exc)
    finally:
        delete_quietly(cluster, f"{path}/{name}")
    lines = [
        f"LocalQueue {settings.namespace}/{name} -> ClusterQueue {settings.cluster_queue}: "
        f"Active={active or 'never set'}"
    ]
    if active != "True":
        return result(
            test,
            Verdict.FAIL,
            f"Kueue did not make the LocalQueue Active within {settings.timeout_s:g} s",
            lines,
        )
    return result(test, Verdict.PASS, "", lines)


def _active(cluster: Cluster, path: str) -> str | None:
    return conditions(cluster.get(path)).get("Active")
