# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The rows of `gpurack accept --inference`, each a CheckResult with its figure and a verdict
against `gpurack_inference_acceptance` (`inference_settings`):

| row | id | figure |
| --- | --- | --- |
| 1 | infer.cold_start | created to first good answer (s): scheduling, container, download, load, answer |
| 2 | infer.warm_start | the same on a node whose cache holds the model; nothing downloaded |
| 3 | infer.load.c<N> | p99 latency (ms) at the lower concurrency; p50, p95, requests/s, errors |
| 4 | infer.load.c<N> | the same at the higher concurrency |
| 5 | infer.rollout | failed requests while new pods replaced every old one under load (goal 0) |
| 6 | infer.autoscale | load to every replica Ready (s), and load ended to the minimum again |
| 7 | infer.isolation | p99 beside a running training job over p99 alone |
| 8 | infer.cost | cost per 1,000 accepted requests, against an API's price |
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Optional

from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.inference_observe import (
    InferenceObserved,
    Start,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.inference_settings import (
    InferenceSettings,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.rowkit import Figure, Head, judged
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.model import (
    Allocation,
    CostError,
    Prices,
    Window,
    cost,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import (
    CheckResult,
    Verdict,
    node_verdict,
)

COST_ROW = "infer.cost"
LOAD_KEYS = (
    "p50_ms", "p95_ms", "p99_ms", "mean_ms", "rps",
    "requests", "failures", "retried", "error_rate", "seconds",
)  # fmt: skip


def _why(seen: InferenceObserved, what: str) -> str:
    return what + (f" ({seen.failure})" if seen.failure else "")


def _start(seen: InferenceObserved, settings: InferenceSettings, index: int, what: str) -> CheckResult:
    head = Head(
        f"infer.{what}_start",
        f"{what.capitalize()} start of {seen.service}: created to first answer",
        seen.team,
    )
    start: Optional[Start] = seen.starts[index] if len(seen.starts) > index else None  # noqa: UP045
    if start is None:
        return head.missing(Verdict.FAIL, _why(seen, "the server never got Ready and answered"))
    details = {**start.phases, "pod": start.pod, "node": start.node, "cache_hit": start.cache.get("hit")}
    # the launcher's `bytes` is the model's size; a hit downloads none of it
    details["model_bytes"] = start.cache.get("bytes")
    details["downloaded_bytes"] = 0 if start.cache.get("hit") else start.cache.get("bytes")
    reason = ""
    if what == "warm" and not start.cache.get("hit"):
        reason = "the model was downloaded again: the node's cache did not hold it"
    figure = Figure(
        start.total_s, "s", "read the phases: the largest one is the one to work on", details, reason
    )
    row = judged(head, figure, [(f"{what}_start_s", start.total_s)], settings)
    if reason:
        return replace(
            row, verdict=Verdict.FAIL, remediation="check the pool's model_cache (its size and path)"
        )
    return row


def _load_row(seen: InferenceObserved, settings: InferenceSettings, index: int) -> CheckResult:
    level = settings.concurrency[index]
    head = Head(f"infer.load.c{level}", f"Latency under load, {level} in flight ({seen.service})", seen.team)
    load = seen.loads[index] if len(seen.loads) > index else {}
    if not load or not load.get("requests"):
        return head.missing(Verdict.FAIL, _why(seen, "the load tool reported no requests"))
    p99 = float(load.get("p99_ms") or 0.0)
    details = {k: load.get(k) for k in LOAD_KEYS}
    details.update(tool=load.get("tool"), kinds=load.get("failure_kinds"))
    figure = Figure(p99, "ms p99", "add replicas or lower the batch size; read p50 against p99", details)
    checks = [("p99_ms", p99), ("error_rate", float(load.get("error_rate") or 0.0))]
    return judged(head, figure, checks, settings)


def _rollout(seen: InferenceObserved, settings: InferenceSettings) -> CheckResult:
    head = Head("infer.rollout", f"Rollout of {seen.service} under load", seen.team)
    if seen.rollout_s is None or not seen.rollout:
        return head.missing(Verdict.FAIL, _why(seen, "the rollout did not complete under the load"))
    if seen.rollout_uncovered_s is not None and seen.rollout_uncovered_s > 0:
        return head.missing(
            Verdict.FAIL,
            f"the load ended {seen.rollout_uncovered_s:g} s before the last old pod stopped",
            "give gpurack_inference_acceptance.rollout_s more than the rollout takes",
        )
    failed = float(seen.rollout.get("failures") or 0)
    details = {"rollout_s": seen.rollout_s, **{k: seen.rollout.get(k) for k in LOAD_KEYS}}
    details["kinds"] = seen.rollout.get("failure_kinds")
    remediation = "check the pods' readiness probe and preStop delay and the PodDisruptionBudget"
    retried = int(seen.rollout.get("retried") or 0)  # closed unanswered by a stopping pod, sent again
    reason = f"{retried} sent again after their connection closed unanswered" if retried else ""
    figure = Figure(failed, "failed requests", remediation, details, reason)
    return judged(head, figure, [("rollout_failures", failed)], settings)


def _autoscale(seen: InferenceObserved, settings: InferenceSettings) -> CheckResult:
    scaling = seen.scaling
    head = Head(
        "infer.autoscale", f"HPA of {seen.service}: {scaling.low} to {scaling.high} and back", seen.team
    )
    if scaling.high <= scaling.low:
        return head.missing(Verdict.SKIP, f"replicas.max is {scaling.high}: nothing to scale")
    if scaling.up_s is None:
        return head.missing(
            Verdict.FAIL,
            _why(seen, f"never {scaling.high} Ready replicas under load (peak {scaling.peak})"),
            "read the HPA's events and its custom metric (custom.metrics.k8s.io)",
        )
    if scaling.down_s is None:
        return head.missing(Verdict.FAIL, _why(seen, f"not back to {scaling.low} replica(s) after the load"))
    details = {"up_s": scaling.up_s, "down_s": scaling.down_s, "peak": scaling.peak}
    figure = Figure(scaling.up_s, "s", "shorten the start (warm cache) or the HPA's windows", details)
    return judged(head, figure, [("scale_up_s", scaling.up_s), ("scale_down_s", scaling.down_s)], settings)


def _isolation(seen: InferenceObserved, settings: InferenceSettings) -> CheckResult:
    head = Head("infer.isolation", f"{seen.service}'s p99 beside a training job over alone", seen.team)
    alone = seen.loads[0] if seen.loads else {}
    beside = seen.isolation.get("with_training") or {}
    if seen.isolation_skipped:
        return head.missing(Verdict.SKIP, seen.isolation_skipped)
    if seen.training_pods < 1:
        return head.missing(Verdict.FAIL, _why(seen, "no training pod ran during the load"))
    if not alone.get("p99_ms") or not beside.get("p99_ms"):
        return head.missing(Verdict.FAIL, _why(seen, "a load reported no latency"))
    ratio = float(beside["p99_ms"]) / float(alone["p99_ms"])
    details = {"p99_alone_ms": alone["p99_ms"], "p99_beside_training_ms": beside["p99_ms"]}
    details.update(training_pods=seen.training_pods, error_rate=beside.get("error_rate"))
    figure = Figure(ratio, "x", "keep training off the inference pool (taints, quota, priority)", details)
    return judged(
        head,
        figure,
        [("isolation_ratio", ratio), ("error_rate", float(beside.get("error_rate") or 0))],
        settings,
    )


def _cost(seen: InferenceObserved, settings: InferenceSettings) -> CheckResult:
    """The seed's formula over the run: the GPUs the service may hold (replicas.max) for the
    whole run, and the site's monthly costs for its hours, over the requests answered well."""
    head = Head(COST_ROW, f"Cost per 1,000 requests of {seen.service}, against an API", seen.team)
    if seen.gpu_hour is None or not seen.pool:
        return head.missing(Verdict.SKIP, f"pool {seen.pool or '?'} has no gpurack_pool.cost.gpu_hour")
    accepted = seen.accepted_requests()
    gpus = seen.gpus_per_replica * seen.scaling.high
    try:
        result = cost(
            Window(seen.started, seen.finished),
            {seen.pool: gpus},
            [Allocation(seen.pool, gpus, seen.started, seen.finished, "accepted", float(accepted))],
            Prices(gpu_hour={seen.pool: seen.gpu_hour}, monthly=seen.monthly),
        )
    except CostError as error:
        return head.missing(Verdict.FAIL, str(error))
    if result.effective_cost is None:
        return head.missing(Verdict.FAIL, _why(seen, "no request was answered well"))
    per_1000 = result.effective_cost * 1000
    details: dict[str, Any] = {"currency": seen.currency, "accepted_requests": accepted, "gpus": gpus}
    details.update(total=round(result.total, 6), hours=round(result.window_hours, 4), gpu_hour=seen.gpu_hour)
    unit = f"{seen.currency or 'cost'}/1000 requests"
    remediation = "compare the pool's price and the replicas' use with the API's price"
    if settings.baseline_per_1000 is None or settings.baseline_per_1000 == 0:
        reason = f"no API price set ({settings.variable}.baseline_per_1000)"
        return judged(head, Figure(per_1000, unit, remediation, details, reason), [], settings)
    ratio = per_1000 / settings.baseline_per_1000
    details.update(baseline_per_1000=settings.baseline_per_1000, ratio=round(ratio, 4))
    figure = Figure(per_1000, unit, remediation, details, f"{ratio:.2f}x the API's price")
    return judged(head, figure, [("cost_ratio", ratio)], settings, miss=Verdict.WARN)


def rows(seen: InferenceObserved, settings: InferenceSettings) -> list[CheckResult]:
    """The eight rows, in the order of the module's table."""
    return [
        _start(seen, settings, 0, "cold"),
        _start(seen, settings, 1, "warm"),
        _load_row(seen, settings, 0),
        _load_row(seen, settings, 1),
        _rollout(seen, settings),
        _autoscale(seen, settings),
        _isolation(seen, settings),
        _cost(seen, settings),
    ]


def summary(seen: InferenceObserved, results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the run comes to, in the shape `gpurack accept` records (as the training run's):
    accepted when no row failed; its units are the requests answered well."""
    verdict = node_verdict(results)
    cost_row = next((r for r in results if r.get("id") == COST_ROW), {})
    priced = cost_row.get("verdict") in (Verdict.PASS.value, Verdict.WARN.value)
    per_1000 = cost_row.get("measured") if priced else None
    answered = any(s is not None for s in seen.starts)
    return {
        "team": seen.team,
        "queue": seen.service,
        "pool": seen.pool,
        "pods": seen.scaling.high,
        "gpus": seen.gpus_per_replica * seen.scaling.high,
        "started": seen.started.isoformat(),
        "finished": seen.finished.isoformat(),
        "outcome": ("failed" if verdict is Verdict.FAIL else "accepted") if answered else "other",
        "units": float(seen.accepted_requests()) if verdict is not Verdict.FAIL else 0.0,
        "verdict": verdict.value,
        "queue_wait_s": None,
        "cost_total": (cost_row.get("details") or {}).get("total") if priced else None,
        "cost_per_unit": per_1000 / 1000 if isinstance(per_1000, (int, float)) else None,
        "currency": seen.currency,
    }
