# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The seven rows of the seed's acceptance test, each a CheckResult with its figure and a
verdict against the inventory's thresholds (`settings`).

| row | id | figure |
| --- | --- | --- |
| 1 | accept.queue | queue wait (s), with Kueue's reason while it waited |
| 2 | accept.staging | staging (s): dataset sample and base weights from the object store |
| 3 | accept.allreduce | all-reduce bus bandwidth between the pods (GB/s) |
| 4 | accept.train | samples/s over the fixed window |
| 5 | accept.restore | restore (s) after a pod was deleted; checkpoint write s and steps lost |
| 6 | accept.labels | the GPU, network, storage, queue and cost labels of the nodes used |
| 7 | accept.cost | cost per accepted unit, against the baseline |

What was observed comes in as one mapping (`Observed.from_mapping`), gathered by the
acceptance role: Kueue's Workload, the pods, the nodes and the trainer's log.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.observe import Observed
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.rowkit import (
    TIER,
    Figure,
    Head,
    judged,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.settings import Settings
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.summary import useful_units
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.model import (
    Allocation,
    CostError,
    Outcome,
    Prices,
    Window,
    against,
    cost,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.topology import LEAF_KEY, SPINE_KEY
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult, Verdict

# The labels row 6 exports per node, by kind; a node used must carry the pool and accelerator.
# The network kind holds where the node sits (its topology levels): under one leaf for a job
# that asked Kueue for the leaf level.
NODE_LABELS: Mapping[str, tuple[str, ...]] = {
    "gpu": ("gpurack.io/accelerator", "gpurack.io/topology"),
    "network": ("gpurack.io/fabric", SPINE_KEY, LEAF_KEY),
    "pool": ("gpurack.io/pool", "gpurack.io/workload"),
}
REQUIRED_LABELS = ("gpurack.io/pool", "gpurack.io/accelerator")


def _why_not(seen: Observed, what: str) -> str:
    return f"the job {what}" + (f": {seen.failure}" if seen.failure else "")


def _queue(seen: Observed, settings: Settings) -> CheckResult:
    head = Head("accept.queue", f"Queued training job admitted by Kueue (LocalQueue {seen.queue})", seen.team)
    if not seen.admitted or seen.queue_wait_s is None:
        return head.missing(
            Verdict.FAIL,
            f"not admitted: {seen.queue_reason or 'Kueue gave no reason'}",
            "give the team's ClusterQueue quota in the pool (gpurack_teams[].quota) or free it",
        )
    waited = f"waited for: {seen.queue_reason}" if seen.queue_reason else "admitted at once"
    figure = Figure(
        seen.queue_wait_s,
        "s",
        "look at the ClusterQueue's pending workloads (gpurack queue)",
        {"reason": seen.queue_reason},
        waited,
    )
    return judged(head, figure, [("queue_wait_s", seen.queue_wait_s)], settings)


def _staging(seen: Observed, settings: Settings) -> CheckResult:
    head = Head("accept.staging", "Dataset sample and base weights pulled from the object store", seen.team)
    event = seen.trainer.attempts[0].staging if seen.trainer.attempts else None
    if event is None:
        return head.missing(Verdict.FAIL, _why_not(seen, "staged nothing"))
    seconds, size = float(event.get("seconds") or 0.0), float(event.get("bytes") or 0.0)
    rate = round(size / seconds / 1e6, 1) if seconds > 0 else None
    figure = Figure(
        seconds,
        "s",
        "check the object store's bandwidth and the team's NetworkPolicy egress",
        {"bytes": size, "mb_per_s": rate, **dict(seen.storage)},
    )
    return judged(head, figure, [("staging_s", seconds)], settings)


def _allreduce(seen: Observed, settings: Settings) -> CheckResult:
    head = Head("accept.allreduce", "All-reduce bus bandwidth between the pods", seen.team)
    if seen.pods < 2:
        return head.missing(Verdict.SKIP, "one pod: the job is not distributed")
    event = next((a.allreduce for a in seen.trainer.attempts if a.allreduce), None)
    if event is None:
        return head.missing(Verdict.FAIL, _why_not(seen, "measured no all-reduce"))
    busbw = float(event.get("busbw_gbps") or 0.0)
    ranks = event.get("world_size", seen.pods)
    head = Head(head.id, f"{head.title} ({event.get('backend', '?')}, {ranks} ranks)", seen.team)
    keys = ("bytes", "iterations", "seconds", "algbw_gbps", "backend", "world_size")
    figure = Figure(
        busbw,
        "GB/s",
        "check the pods' network path (fabric, MTU, NetworkPolicy between the pods)",
        {k: event.get(k) for k in keys},
    )
    return judged(head, figure, [("busbw_gbps", busbw)], settings)


def _train(seen: Observed, settings: Settings) -> CheckResult:
    head = Head("accept.train", f"Trained for the fixed window ({settings.window_s:g} s)", seen.team)
    final = seen.trainer.final
    if final is None or final.done is None:
        return head.missing(Verdict.FAIL, _why_not(seen, "did not finish its window"))
    rate = float(final.done.get("samples_per_s") or 0.0)
    keys = ("steps", "samples", "elapsed_s", "first_loss", "loss", "device")
    figure = Figure(
        rate,
        "samples/s",
        "compare samples/s with the pool's expected figure; check CPU/GPU throttling",
        {k: final.done.get(k) for k in keys},
    )
    return judged(head, figure, [("samples_per_s", rate)], settings)


def _restore(seen: Observed, settings: Settings) -> CheckResult:
    head = Head("accept.restore", "Checkpoint written, a pod deleted, training restored", seen.team)
    writes = [c for a in seen.trainer.attempts for c in a.checkpoints]
    resumed = next((a.resume for a in seen.trainer.attempts[1:] if a.resume), None)
    if not writes:
        return head.missing(Verdict.FAIL, _why_not(seen, "wrote no checkpoint"))
    if resumed is None or seen.restore_s is None or seen.deleted_at_step is None:
        return head.missing(Verdict.FAIL, "no restart from a checkpoint was seen after the pod was deleted")
    write = max(writes, key=lambda c: float(c.get("seconds") or 0.0))
    write_s = float(write.get("seconds") or 0.0)
    lost = max(seen.deleted_at_step - int(resumed.get("step") or 0), 0)
    details = {
        "checkpoint_write_s": write_s,
        "checkpoint_bytes": write.get("bytes"),
        "checkpoints": len(writes),
        "deleted_at_step": seen.deleted_at_step,
        "restored_step": resumed.get("step"),
        "steps_lost": lost,
        "trainer_restore_s": resumed.get("seconds"),
    }
    figure = Figure(
        seen.restore_s,
        "s",
        "checkpoint more often (checkpoint_interval_steps) or speed up the store",
        details,
    )
    checks = [("restore_s", seen.restore_s), ("checkpoint_write_s", write_s), ("steps_lost", float(lost))]
    return judged(head, figure, checks, settings)


def _labels(seen: Observed, price: Mapping[str, Any]) -> CheckResult:
    head = Head("accept.labels", "GPU, network, storage, queue and cost labels exported", seen.team)
    if not seen.nodes:
        return head.missing(Verdict.FAIL, _why_not(seen, "ran on no node"))
    lacking = sorted(n for n, labels in seen.nodes.items() if any(k not in labels for k in REQUIRED_LABELS))
    per_kind = {
        kind: {
            node: {k: labels[k] for k in keys if k in labels} for node, labels in sorted(seen.nodes.items())
        }
        for kind, keys in NODE_LABELS.items()
    }
    return CheckResult(
        id=head.id,
        verdict=Verdict.FAIL if lacking else Verdict.PASS,
        title=head.title,
        tier=TIER,
        component=head.component,
        measured=len(seen.nodes) - len(lacking),
        expected=len(seen.nodes),
        unit="nodes",
        reason=f"no {' or '.join(REQUIRED_LABELS)} on {', '.join(lacking)}" if lacking else "",
        remediation="run join.yml (node_labels) on the nodes named" if lacking else None,
        details={
            **per_kind,
            "storage": dict(seen.storage),
            "queue": {"team": seen.team, "local_queue": seen.queue},
            "cost": dict(price),
        },
    )


def _cost(seen: Observed, settings: Settings) -> CheckResult:
    head = Head("accept.cost", "Useful work against the baseline", seen.team)
    if not seen.admitted:
        return head.missing(Verdict.SKIP, "not admitted: the job held no GPUs, so nothing was spent or done")
    if seen.gpu_hour is None or not seen.pool:
        return head.missing(Verdict.SKIP, f"pool {seen.pool or '?'} has no gpurack_pool.cost.gpu_hour")
    units = useful_units(seen)
    gpus = seen.pods * seen.gpus_per_pod
    outcome: Outcome = "failed" if seen.job_failed else "accepted"
    try:
        result = cost(
            Window(seen.started, seen.finished),
            {seen.pool: gpus},
            [Allocation(seen.pool, gpus, seen.started, seen.finished, outcome, units)],
            Prices(gpu_hour={seen.pool: seen.gpu_hour}, monthly=seen.monthly),
        )
    except CostError as error:
        return head.missing(Verdict.FAIL, str(error))
    per_unit = result.effective_cost
    if per_unit is None:
        return head.missing(Verdict.FAIL, "no accepted units: nothing useful was done")
    details: dict[str, Any] = {
        "currency": seen.currency,
        "accepted_units": units,
        "total": round(result.total, 6),
        "gpu_hours": round(gpus * result.window_hours, 6),
        "gpu_hour": seen.gpu_hour,
    }
    unit = f"{seen.currency or 'cost'}/sample"
    remediation = "compare the pool's price and idle time with the baseline"
    if settings.baseline is None:
        figure = Figure(per_unit, unit, remediation, details, "no baseline set (gpurack_acceptance.baseline)")
        return judged(head, figure, [], settings)
    comparison = against(result, settings.baseline)
    if comparison.ratio is None:
        return head.missing(Verdict.SKIP, "the baseline prices this work at nothing")
    details.update(
        baseline=settings.baseline.kind,
        baseline_price=settings.baseline.price,
        baseline_cost=round(comparison.baseline_cost, 6),
        ratio=round(comparison.ratio, 4),
    )
    reason = f"{comparison.ratio:.2f}x the baseline ({settings.baseline.kind})"
    figure = Figure(per_unit, unit, remediation, details, reason)
    return judged(head, figure, [("cost_ratio", comparison.ratio)], settings, miss=Verdict.WARN)


def rows(seen: Observed, settings: Settings) -> list[CheckResult]:
    """The seven rows, in the seed's order."""
    price = {"pool": seen.pool, "gpu_hour": seen.gpu_hour, "currency": seen.currency}
    return [
        _queue(seen, settings),
        _staging(seen, settings),
        _allreduce(seen, settings),
        _train(seen, settings),
        _restore(seen, settings),
        _labels(seen, price),
        _cost(seen, settings),
    ]


def line(row: Mapping[str, Any]) -> str:
    """`row` (a result's dict) as one line: `accept.queue  pass  3 s  admitted at once`."""
    measured = row.get("measured")
    figure = f"{measured:g} {row.get('unit') or ''}".strip() if isinstance(measured, (int, float)) else "-"
    head = f"{row.get('id', '?'):<17} {row.get('verdict', '?'):<5} {figure:<22}"
    return f"{head} {row.get('reason') or ''}".rstrip()
