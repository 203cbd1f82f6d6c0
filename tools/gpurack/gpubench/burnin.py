"""The burn-in tier: every GPU loaded at once for a set time, then throughput, stability,
throttling and counter deltas judged.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import result, skip, spec
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import CheckResult, Verdict

from gpurack.gpubench import burn, measure
from gpurack.gpubench.deltas import regather
from gpurack.gpubench.limits import (
    THRESHOLDS,
    bf16_limit,
)
from gpurack.gpubench.results import judged
from gpurack.gpubench.targets import (
    Gather,
    GpuTarget,
    Progress,
    quiet,
    skip_all,
    usable_targets,
)

BURN_IN_CHECKS: tuple[str, ...] = (
    "gpu.burn_in_throughput",
    "gpu.burn_in_stability",
    "gpu.burn_in_consistency",
    "gpu.burn_in_throttle",
)


def _throttle_result(
    target: GpuTarget, samples: Sequence[burn.SmiSample], smi_error: str | None
) -> CheckResult:
    check_id = "gpu.burn_in_throttle"
    mine = [s for s in samples if s.index == target.index]
    if not mine:
        return skip(
            check_id,
            f"no nvidia-smi samples: {smi_error or 'GPU not listed'}",
            component=target.component,
            tier="burn-in",
        )
    seen = Counter(r for s in mine for r in s.reasons)
    hot = max((s.temperature_c for s in mine if s.temperature_c is not None), default=None)
    bad = sorted(r for r in seen if r in burn.THROTTLE_FAIL)
    soft = sorted(r for r in seen if r in burn.THROTTLE_WARN)
    verdict = Verdict.FAIL if bad else Verdict.WARN if soft else Verdict.PASS
    summary = ", ".join(f"{r} in {n}/{len(mine)} samples" for r, n in sorted(seen.items())) or "none"
    lines = [
        f"t={s.at_s:g}s temp={s.temperature_c} C sm={s.sm_clock_mhz} MHz power={s.power_w} W "
        f"reasons={','.join(s.reasons) or '-'}"
        for s in mine
    ]
    return result(
        check_id,
        verdict,
        component=target.component,
        measured=hot,
        unit="C",
        expected=spec(check_id).limit,
        reason=f"clock event reasons seen: {summary}; hottest {hot} C",
        source=f"nvidia-smi --query-gpu={','.join(burn.SMI_FIELDS)} every sample interval",
        lines=lines,
    )


def _burn_results(target: GpuTarget, report: burn.WorkerReport, method: str) -> list[CheckResult]:
    comp = target.component
    if report.error or not report.tflops:
        why = report.error or "no measurement window completed"
        return [
            result(c, Verdict.FAIL, component=comp, source="", reason=f"burn-in worker failed: {why}"[:500])
            for c in BURN_IN_CHECKS[:3]
        ]
    median = statistics.median(report.tflops)
    lines = _burn_lines(report)
    ratio = burn.stability(report.tflops) or 0.0
    stab = THRESHOLDS["gpu.burn_in_stability"]
    return [
        judged(
            "gpu.burn_in_throughput",
            comp,
            median,
            "TFLOP/s",
            bf16_limit(target.model),
            tier="burn-in",
            source=method,
            lines=lines,
        ),
        result(
            "gpu.burn_in_stability",
            stab.verdict(ratio, 1.0),
            component=comp,
            measured=round(ratio, 3),
            expected=stab.pass_ratio,
            unit="min/median",
            limit_source=stab.source,
            source=method,
            lines=lines,
            reason=f"slowest window {min(report.tflops):.1f} TFLOP/s, median {median:.1f}: ratio {ratio:.3f}",
        ),
        result(
            "gpu.burn_in_consistency",
            Verdict.FAIL if report.mismatches else Verdict.PASS,
            component=comp,
            measured=report.mismatches,
            expected=0,
            unit="batches",
            source=method,
            reason=f"{report.mismatches} of {report.batches} batches gave a product different from the first",
        ),
    ]


def _burn_lines(report: burn.WorkerReport) -> list[str]:
    """The burn-in's evidence: batches run, and every window's throughput and copy rate."""
    return [
        f"batches of 20 products + 1 copy: {report.batches}; {len(report.tflops)} windows of "
        f">= {burn.WINDOW_S:g} s GPU time",
        "tflops: " + ", ".join(f"{x:.1f}" for x in report.tflops),
        "copy_gbps: " + ", ".join(f"{x:.0f}" for x in report.copy_gbps),
    ]


def run_burn_in(
    duration_s: float,
    facts_before: Mapping[str, Any],
    gather: Gather,
    progress: Progress | None = None,
    *,
    sample_interval_s: float = 10.0,
) -> list[CheckResult]:
    """Burn-in tier: every GPU under bf16 products and copies for `duration_s`, all at once.

    Judges median throughput, stability (min/median window), repeatability of the product,
    throttle reasons from nvidia-smi samples, then counter deltas.
    """
    say = progress or quiet
    reason = measure.unavailable_reason()
    if reason is not None:
        return skip_all(facts_before, reason, BURN_IN_CHECKS, "burn-in")
    usable, results = usable_targets(facts_before, BURN_IN_CHECKS, "burn-in")
    if not usable:
        results.append(skip("counters.delta", "no GPU could be loaded", tier="burn-in"))
        return results
    say(f"burn-in on {len(usable)} GPU(s) for {duration_s:g} s")
    run = burn.run_burn([t.cuda for t in usable if t.cuda is not None], duration_s, sample_interval_s, say)
    method = (
        f"bf16 8192^3 products (batches of 20, each followed by a 1 GiB device copy) on all "
        f"{len(usable)} GPUs at once for {duration_s:g} s (ran {run.duration_s:g} s); "
        "each product compared with the first; "
        f"nvidia-smi sampled every {sample_interval_s:g} s"
    )
    for target in usable:
        report = run.workers.get(target.cuda or 0) or burn.WorkerReport(
            target.cuda or 0, (), (), 0, 0, "no report"
        )
        results.extend(_burn_results(target, report, method))
        results.append(_throttle_result(target, run.samples, run.smi_error))
    results.extend(regather(facts_before, gather, "burn-in", say))
    return results
