# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What one acceptance run comes to beside its seven rows: its outcome, the useful work it did
and the cost figures the inventory DB keeps.

Made once, here, from the same observation the rows came from: the acceptance role writes it
into its report (filter `acceptance_summary`) and `gpurack accept` records it as written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance import trainer_log
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.observe import Observed
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.model import Outcome
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import Verdict, node_verdict

COST_ROW = "accept.cost"


def accepted_units(report: trainer_log.TrainerReport) -> float:
    """The samples of useful work: the final step reached times the samples per step (work
    lost to a restart is not counted)."""
    final = report.final
    if final is None or final.done is None:
        return 0.0
    steps = int(final.done.get("steps") or 0)
    done_here = max(steps - int((final.resume or {}).get("step") or 0), 0)
    per_step = float(final.done.get("samples") or 0.0) / done_here if done_here else 0.0
    return steps * per_step


def useful_units(seen: Observed) -> float:
    """The units the job's GPU time bought: none when the job failed."""
    return 0.0 if seen.job_failed else accepted_units(seen.trainer)


def outcome(seen: Observed, verdict: Verdict) -> Outcome:
    """accepted (admitted, completed, no row failed), failed, or other (never held GPUs)."""
    if not seen.admitted:
        return "other"
    if seen.job_failed or not seen.trainer.finished or verdict is Verdict.FAIL:
        return "failed"
    return "accepted"


def summary(seen: Observed, results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The run's summary (plain JSON types): who ran it where, its GPUs' allocation, its
    outcome, its useful units and its cost (from the cost row, when that row priced it)."""
    verdict = node_verdict(results)
    ended = outcome(seen, verdict)
    cost = next((r for r in results if r.get("id") == COST_ROW), {})
    priced = cost.get("verdict") in (Verdict.PASS.value, Verdict.WARN.value)
    return {
        "team": seen.team,
        "queue": seen.queue,
        "pool": seen.pool,
        "pods": seen.pods,
        "gpus": seen.pods * seen.gpus_per_pod,
        "started": seen.started.isoformat(),
        "finished": max(seen.finished, seen.started).isoformat(),
        "outcome": ended,
        "units": useful_units(seen) if ended == "accepted" else 0.0,
        "verdict": verdict.value,
        "queue_wait_s": seen.queue_wait_s,
        "cost_total": (cost.get("details") or {}).get("total") if priced else None,
        "cost_per_unit": cost.get("measured") if priced else None,
        "currency": seen.currency,
    }
