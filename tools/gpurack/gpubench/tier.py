"""The standard tier: measured checks on each of a node's GPUs, the all-reduce, counter deltas.

`run_standard` measures each GPU in turn (pinned H2D/D2H, device copy, bf16 matrix product),
then the all-reduce across all of them, re-reads the facts and compares error counters.
The burn-in tier is `gpubench.burnin`, the GPU targets `gpubench.targets` and the counter deltas
`gpubench.deltas`. Every tier returns `CheckResult`s (built by `checks.registry.result`, as the quick
tier's are) and never raises for a node fault. Facts are read through the parsers' views only.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import result, skip
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import CheckResult, Verdict

from gpurack.gpubench import allreduce, measure
from gpurack.gpubench.deltas import regather
from gpurack.gpubench.limits import (
    Limit,
    allreduce_limit,
    bf16_limit,
    hbm_limit,
    pcie_limit,
)
from gpurack.gpubench.results import judged
from gpurack.gpubench.targets import (
    NODE,
    Gather,
    GpuTarget,
    Progress,
    nvlink_connected,
    quiet,
    skip_all,
    usable_targets,
)

PER_GPU_CHECKS: tuple[str, ...] = (
    "gpu.h2d_bandwidth",
    "gpu.d2h_bandwidth",
    "gpu.d2d_bandwidth",
    "gpu.bf16_matmul",
)


def _lines(measurement: measure.Measurement) -> list[str]:
    return measurement.evidence_lines()


def _measure_gpu(target: GpuTarget, progress: Progress) -> list[CheckResult]:
    """The four per-GPU measurements of one GPU, each judged against its limit."""
    assert target.cuda is not None
    gpu, model, cuda = target.fact, target.model, target.cuda
    plan: list[tuple[str, Callable[[], measure.Measurement], Limit | None]] = [
        ("gpu.h2d_bandwidth", lambda: measure.copy_bandwidth(cuda, "h2d"), pcie_limit(gpu, model)),
        ("gpu.d2h_bandwidth", lambda: measure.copy_bandwidth(cuda, "d2h"), pcie_limit(gpu, model)),
        ("gpu.d2d_bandwidth", lambda: measure.d2d_bandwidth(cuda), hbm_limit(model)),
        ("gpu.bf16_matmul", lambda: measure.bf16_matmul(cuda), bf16_limit(model)),
    ]
    results = []
    for check_id, run, limit in plan:
        t0 = time.monotonic()
        try:
            m = run()
        except measure.TorchUnavailableError as exc:
            results.append(skip(check_id, str(exc), component=target.component))
            continue
        except RuntimeError as exc:  # CUDA errors (out of memory, a GPU fault) surface as RuntimeError
            results.append(
                result(
                    check_id,
                    Verdict.FAIL,
                    component=target.component,
                    reason=f"measurement failed: {exc}".strip()[:500],
                    remediation="check for other processes on the GPU (nvidia-smi) and Xid events in the "
                    "kernel log (dmesg | grep Xid); rerun on an idle GPU",
                    source="",
                    duration_s=round(time.monotonic() - t0, 3),
                )
            )
            continue
        judged_result = judged(
            check_id,
            target.component,
            m.value,
            m.unit,
            limit,
            source=m.method,
            lines=_lines(m),
            duration_s=m.duration_s,
        )
        results.append(judged_result)
        verdict = judged_result.verdict
        progress(f"{target.component} {check_id}: {m.value:.4g} {m.unit} ({verdict}, {m.duration_s:.1f} s)")
    return results


def _allreduce_lines(points: Sequence[allreduce.SizePoint]) -> list[str]:
    """One evidence line per message size: bus and algorithm bandwidth, the median and every timing."""
    return [
        f"{p.size_bytes / allreduce.GIB:g} GiB: busbw {p.busbw_gbps:.1f} GB/s, "
        f"algbw {p.algbw_gbps:.1f} GB/s, median {statistics.median(p.timings_ms):.3f} ms; timings_ms: "
        + ", ".join(f"{t:.3f}" for t in p.timings_ms)
        for p in points
    ]


def _measure_allreduce(
    usable: Sequence[GpuTarget], facts: Mapping[str, Any], sizes: Sequence[int], progress: Progress
) -> CheckResult:
    """Bus bandwidth of an all-reduce across `usable` GPUs, judged at the first size."""
    check_id = "gpu.allreduce_busbw"
    model = usable[0].model
    connected, topo_evidence = nvlink_connected(facts, model)
    limits = [lim for t in usable if (lim := allreduce_limit(t.fact, t.model, connected)) is not None]
    limit = min(limits, key=lambda lim: lim.value) if len(limits) == len(usable) else None
    try:
        res = allreduce.run_allreduce([t.cuda for t in usable if t.cuda is not None], sizes=sizes)
    except allreduce.AllReduceError as exc:
        return result(
            check_id,
            Verdict.FAIL,
            reason=str(exc)[:500],
            remediation="check NVLink state (nvidia-smi nvlink -s), fabric manager and NCCL "
            "(rerun with NCCL_DEBUG=INFO)",
            source="",
        )
    first = res.points[0]
    lines = [*_allreduce_lines(res.points), topo_evidence]
    points = [
        {
            "size_bytes": p.size_bytes,
            "busbw_gbps": round(p.busbw_gbps, 2),
            "algbw_gbps": round(p.algbw_gbps, 2),
        }
        for p in res.points
    ]
    judged_result = judged(
        check_id,
        NODE,
        first.busbw_gbps,
        "GB/s",
        limit,
        source=res.method,
        lines=lines,
        duration_s=res.duration_s,
        details={"ranks": res.ranks, "points": points},
    )
    progress(
        f"all-reduce x{res.ranks}: {first.busbw_gbps:.1f} GB/s busbw "
        f"({judged_result.verdict}, {res.duration_s:.1f} s)"
    )
    return judged_result


def run_standard(
    facts_before: Mapping[str, Any],
    gather: Gather,
    progress: Progress | None = None,
    *,
    allreduce_sizes: Sequence[int] = allreduce.DEFAULT_SIZES,
) -> list[CheckResult]:
    """Standard tier on this node: per-GPU measurements, the all-reduce, then counter deltas.

    `facts_before` are the node's facts (`gpurack_gpu`, `gpurack_os`, ...) read before the run;
    `gather` re-reads them afterwards. Without torch or a CUDA device every check is a skip.
    """
    say = progress or quiet
    reason = measure.unavailable_reason()
    if reason is not None:
        return skip_all(facts_before, reason, PER_GPU_CHECKS, "standard")
    usable, results = usable_targets(facts_before, PER_GPU_CHECKS, "standard")
    if not usable:
        results.append(skip("gpu.allreduce_busbw", "no GPU could be measured"))
    for target in usable:
        results.extend(_measure_gpu(target, say))
    if len(usable) >= 2:
        results.append(_measure_allreduce(usable, facts_before, allreduce_sizes, say))
    elif usable:
        results.append(skip("gpu.allreduce_busbw", "one GPU: an all-reduce needs at least 2"))
    results.extend(regather(facts_before, gather, "standard", say))
    return results
