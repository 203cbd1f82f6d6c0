"""The standard and burn-in tiers: measured checks on a node's GPUs, then counter deltas.

`run_standard` measures each GPU in turn (pinned H2D/D2H, device copy, bf16 matrix product),
then the all-reduce across all of them, re-reads the facts and compares error counters.
`run_burn_in` loads every GPU at once for a set time and judges throughput, stability and
throttling. Both return `CheckResult`s (built by `checks.spec.result`, as the quick tier's are)
and never raise for a node fault. Facts are read through the parsers' views only.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils._fact_view import count
from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_models import GpuModel, find_model
from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_views import GpuFactsView, GpuView
from ansible_collections.gpurack.bootstrap.plugins.module_utils._nic_facts import NicFactsView
from ansible_collections.gpurack.bootstrap.plugins.module_utils._os_facts import OsFactsView, XidEventView
from ansible_collections.gpurack.bootstrap.plugins.module_utils._results import (
    CheckResult,
    Verdict,
    overall,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils._xid_catalogue import xid_info
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.spec import result, skip, spec

from gpurack.gpubench import allreduce, burn, measure
from gpurack.gpubench.limits import (
    THRESHOLDS,
    Limit,
    allreduce_limit,
    bf16_limit,
    hbm_limit,
    pcie_limit,
)
from gpurack.gpubench.results import TierName, judged

Progress = Callable[[str], None]
Gather = Callable[[], Mapping[str, Any]]

PER_GPU_CHECKS: tuple[str, ...] = (
    "gpu.h2d_bandwidth",
    "gpu.d2h_bandwidth",
    "gpu.d2d_bandwidth",
    "gpu.bf16_matmul",
)
BURN_IN_CHECKS: tuple[str, ...] = (
    "gpu.burn_in_throughput",
    "gpu.burn_in_stability",
    "gpu.burn_in_consistency",
    "gpu.burn_in_throttle",
)
NODE = "node"


@dataclass(frozen=True, slots=True)
class GpuTarget:
    """One GPU to measure: its facts index, CUDA index (None: not visible) and model."""

    index: int
    cuda: int | None
    component: str
    fact: GpuView
    model: GpuModel | None
    skip_reason: str | None = None


def _quiet(_: str) -> None:
    return None


def _gpus(facts: Mapping[str, Any]) -> list[GpuView]:
    section = GpuFactsView.of(facts)
    return section.gpus() if section is not None else []


def _norm_uuid(uuid: Any) -> str | None:
    if not isinstance(uuid, str) or not uuid:
        return None
    text = uuid.strip().lower()
    return text[4:] if text.startswith("gpu-") else text


def _cuda_index(device: GpuView) -> int:
    return int(device.field("index"))


def _bus(view: GpuView) -> str | None:
    bus = view.field("bus_id")
    return str(bus).lower() if bus else None


def _target(pos: int, gpu: GpuView, cuda: int | None) -> GpuTarget:
    reason = None
    if gpu.field("mig_mode") is True:
        reason = "MIG mode is enabled: measured checks need the whole GPU (disable MIG to run them)"
    elif cuda is None:
        reason = "GPU not visible to CUDA in this process (CUDA_VISIBLE_DEVICES or a container limit?)"
    index = gpu.field("index")
    return GpuTarget(
        index=index if isinstance(index, int) else pos,
        cuda=cuda,
        component=gpu.component(),
        fact=gpu,
        model=find_model(gpu.field("name"), gpu.field("pci_device_id")),
        skip_reason=reason,
    )


def targets(facts: Mapping[str, Any], devices: Sequence[Mapping[str, Any]]) -> list[GpuTarget]:
    """Pair each GPU of the facts with the CUDA device that is the same GPU (uuid, then bus id).

    `devices` are `measure.visible_devices()` (index, name, uuid, bus_id: GPU fields, read as
    GPU views). Without GPU facts (no nvidia-smi), the CUDA devices themselves are the targets.
    """
    cuda = [GpuView(d) for d in devices]
    gpus = _gpus(facts)
    if not gpus:
        return [
            GpuTarget(_cuda_index(d), _cuda_index(d), d.component(), d, find_model(d.field("name")))
            for d in cuda
        ]
    by_uuid = {_norm_uuid(d.field("uuid")): _cuda_index(d) for d in cuda if d.field("uuid")}
    by_bus = {_bus(d): _cuda_index(d) for d in cuda if _bus(d)}
    identified = bool(by_uuid or by_bus)
    found = []
    for pos, gpu in enumerate(gpus):
        index = by_uuid.get(_norm_uuid(gpu.field("uuid")))
        if index is None and _bus(gpu):
            index = by_bus.get(_bus(gpu))
        if index is None and not identified and len(gpus) == len(cuda):
            index = _cuda_index(cuda[pos])  # no ids on either side: same count, same order
        found.append(_target(pos, gpu, index))
    return found


def nvlink_connected(facts: Mapping[str, Any], model: GpuModel | None) -> tuple[bool, str]:
    """Whether the GPUs talk over NVLink, and the evidence: topology, else links, else the model."""
    section = GpuFactsView.of(facts)
    links = section.mapping("topology.links") if section is not None else {}
    pairs = [
        str(kind)
        for src, row in links.items()
        if str(src).startswith("GPU") and isinstance(row, Mapping)
        for dst, kind in row.items()
        if str(dst).startswith("GPU")
    ]
    if pairs:
        nv = any(kind.startswith("NV") for kind in pairs)
        return nv, f"nvidia-smi topo -m: GPU pairs linked by {', '.join(sorted(set(pairs)))}"
    nvlinks = [link for g in _gpus(facts) for link in g.nvlinks()]
    if nvlinks:
        active = any(link.field("active") for link in nvlinks)
        return active, f"nvidia-smi nvlink -s: {'active' if active else 'no active'} NVLinks"
    has = model is not None and bool(model.nvlinks_per_gpu)
    return has, "no topology or NVLink facts: assumed from the model table's form factor"


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
    lines = [
        f"{p.size_bytes / allreduce.GIB:g} GiB: busbw {p.busbw_gbps:.1f} GB/s, "
        f"algbw {p.algbw_gbps:.1f} GB/s, median {statistics.median(p.timings_ms):.3f} ms; timings_ms: "
        + ", ".join(f"{t:.3f}" for t in p.timings_ms)
        for p in res.points
    ]
    lines.append(topo_evidence)
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


# Counters compared across the run: (GpuView field, label, verdict when it rises). Each field
# is one the GPU parser emits (GpuView.FIELDS); the PCIe replay counters come from nvidia-smi's
# pci/replay_counter and pci/replay_rollover_counter.
_GPU_COUNTERS: tuple[tuple[str, str, Verdict], ...] = (
    ("ecc_errors.volatile_uncorrected", "ECC volatile uncorrected", Verdict.FAIL),
    ("ecc_errors.volatile_corrected", "ECC volatile corrected", Verdict.WARN),
    ("remapped_rows.uncorrectable", "rows remapped for uncorrectable errors", Verdict.FAIL),
    ("remapped_rows.correctable", "rows remapped for correctable errors", Verdict.WARN),
    ("retired_pages.double_bit", "pages retired for double-bit errors", Verdict.FAIL),
    ("retired_pages.single_bit", "pages retired for single-bit errors", Verdict.WARN),
    ("pcie_replays.since_reset", "PCIe replays", Verdict.WARN),
    ("pcie_replays.rollovers", "PCIe replay rollovers", Verdict.WARN),
)
_GPU_FLAGS: tuple[tuple[str, str, Verdict], ...] = (
    ("remapped_rows.pending", "row remap pending (needs a GPU reset)", Verdict.WARN),
    ("remapped_rows.failure", "row remapping failed", Verdict.FAIL),
    ("retired_pages.pending", "page retirement pending", Verdict.WARN),
)


def _xid_key(event: XidEventView) -> tuple[Any, ...]:
    return tuple(event.field(k) for k in ("time", "bus_id", "xid", "message"))


def _xid_events(facts: Mapping[str, Any]) -> list[XidEventView]:
    os_facts = OsFactsView.of(facts)
    return (os_facts.xid_events() or []) if os_facts is not None else []


def new_xids(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[XidEventView]:
    """Xid events in `after` that `before` did not have (as a multiset: repeats count)."""
    seen = Counter(_xid_key(e) for e in _xid_events(before))
    fresh = []
    for event in _xid_events(after):
        key = _xid_key(event)
        if seen[key] > 0:
            seen[key] -= 1
        else:
            fresh.append(event)
    return fresh


def _gpu_key(gpu: GpuView) -> str:
    return _norm_uuid(gpu.field("uuid")) or str(gpu.field("bus_id") or gpu.field("index"))


def _gpu_changes(
    gpu: GpuView, now: GpuView, xids: list[XidEventView]
) -> tuple[dict[str, int], list[str], list[Verdict]]:
    """What rose on one GPU between the two reads: deltas, evidence lines, verdicts."""
    deltas: dict[str, int] = {}
    lines: list[str] = []
    verdicts: list[Verdict] = []
    for path, label, verdict in _GPU_COUNTERS:
        old, new = count(gpu.field(path)), count(now.field(path))
        if old is None or new is None:
            continue
        lines.append(f"{label} ({path}): {old} -> {new}")
        if new > old:
            deltas[label] = new - old
            verdicts.append(verdict)
    for path, label, verdict in _GPU_FLAGS:
        old_flag, new_flag = gpu.field(path), now.field(path)
        if new_flag is True and old_flag is not True:
            lines.append(f"{label} ({path}): {old_flag} -> {new_flag}")
            deltas[label] = 1
            verdicts.append(verdict)
    bus = _bus(gpu)
    for event in (e for e in xids if bus and str(e.field("bus_id") or "").lower() == bus):
        info = xid_info(int(event.field("xid") or 0))
        lines.append(f"new Xid {info.code} ({info.name}): {event.field('message')}; {info.resolution}")
        deltas[f"Xid {info.code}"] = deltas.get(f"Xid {info.code}", 0) + 1
        verdicts.append(Verdict.FAIL)
    return deltas, lines, verdicts


def _gpu_delta(gpu: GpuView, now: GpuView | None, xids: list[XidEventView], tier: TierName) -> CheckResult:
    if now is None:
        return result(
            "counters.delta",
            Verdict.FAIL,
            component=gpu.component(),
            tier=tier,
            expected="no increase",
            unit="count",
            reason="GPU missing from the facts after the run (fell off the bus?)",
            remediation="check dmesg for Xid 79 / 'fallen off the bus'; reseat or replace the GPU",
            source="facts before and after the run",
        )
    deltas, lines, verdicts = _gpu_changes(gpu, now, xids)
    reason = (
        "rose during the run: " + ", ".join(f"{k} +{v}" for k, v in deltas.items())
        if deltas
        else "no error counter rose during the run"
    )
    return result(
        "counters.delta",
        overall(verdicts) if verdicts else Verdict.PASS,
        component=gpu.component(),
        tier=tier,
        measured=sum(deltas.values()),
        expected=0,
        unit="count",
        reason=reason,
        source="facts before and after the run (gpurack_gpu, gpurack_os)",
        lines=lines,
        details={"deltas": deltas},
    )


def counter_deltas(
    before: Mapping[str, Any], after: Mapping[str, Any], tier: TierName = "standard"
) -> list[CheckResult]:
    """`counters.delta` results: one per GPU, per RDMA port whose counters rose, and per stray Xid."""
    after_gpus = {_gpu_key(g): g for g in _gpus(after)}
    xids = new_xids(before, after)
    gpus = _gpus(before)
    results = [_gpu_delta(gpu, after_gpus.get(_gpu_key(gpu)), xids, tier) for gpu in gpus]
    buses = {_bus(g) for g in gpus if _gpu_key(g) in after_gpus}
    stray = [e for e in xids if str(e.field("bus_id") or "").lower() not in buses]
    if stray:
        results.append(
            result(
                "counters.delta",
                Verdict.FAIL,
                tier=tier,
                measured=len(stray),
                expected=0,
                unit="count",
                reason=f"{len(stray)} new Xid event(s) during the run on devices not in the GPU facts",
                source="gpurack_os.xid_events before and after the run",
                lines=[
                    f"new Xid {e.field('xid')} on {e.field('bus_id')}: {e.field('message')}" for e in stray
                ],
            )
        )
    results.extend(_rdma_deltas(before, after, tier))
    return results


def _rdma_deltas(before: Mapping[str, Any], after: Mapping[str, Any], tier: TierName) -> list[CheckResult]:
    """A warn per RDMA port whose error counters rose (symbol errors, link downs, ...)."""

    def ports(facts: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
        nic = NicFactsView.of(facts)
        return {p.component(): p.mapping("counters") for p in nic.rdma()} if nic is not None else {}

    results = []
    now_ports = ports(after)
    for component, old_c in ports(before).items():
        new_c = now_ports.get(component, {})
        rose = {}
        for name, old_value in old_c.items():
            old, new = count(old_value), count(new_c.get(name))
            if old is not None and new is not None and new > old:
                rose[str(name)] = new - old
        if rose:
            results.append(
                result(
                    "counters.delta",
                    Verdict.WARN,
                    component=component,
                    tier=tier,
                    measured=sum(rose.values()),
                    expected=0,
                    unit="count",
                    source="gpurack_nic.rdma[].counters before and after the run",
                    reason="rose during the run: " + ", ".join(f"{k} +{v}" for k, v in rose.items()),
                    lines=[f"{k}: {old_c[k]} -> {new_c[k]}" for k in rose],
                    details={"deltas": rose},
                )
            )
    return results


def _regather(
    facts_before: Mapping[str, Any], gather: Gather, tier: TierName, progress: Progress
) -> list[CheckResult]:
    t0 = time.monotonic()
    try:
        after = gather()
    # Whatever stops the re-read (a hung tool, malformed output) means "could not assess", not a crash.
    except Exception as exc:
        return [skip("counters.delta", f"could not re-read the facts after the run: {exc}", tier=tier)]
    results = counter_deltas(facts_before, after, tier)
    progress(f"counters re-read and compared ({time.monotonic() - t0:.1f} s)")
    took = round(time.monotonic() - t0, 3)
    return [replace(r, duration_s=took) for r in results]


def _skip_all(
    facts: Mapping[str, Any], reason: str, check_ids: Sequence[str], tier: TierName
) -> list[CheckResult]:
    gpus = _gpus(facts)
    components = [g.component() for g in gpus] or [NODE]
    results = [skip(c, reason, component=comp, tier=tier) for comp in components for c in check_ids]
    if tier == "standard" and len(gpus) != 1:
        results.append(skip("gpu.allreduce_busbw", reason))
    results.append(skip("counters.delta", f"nothing was measured: {reason}", tier=tier))
    return results


def _usable_targets(
    facts_before: Mapping[str, Any], check_ids: Sequence[str], tier: TierName
) -> tuple[list[GpuTarget], list[CheckResult]]:
    all_targets = targets(facts_before, measure.visible_devices())
    skipped = [
        skip(c, t.skip_reason, component=t.component, tier=tier)
        for t in all_targets
        if t.skip_reason
        for c in check_ids
    ]
    return [t for t in all_targets if t.skip_reason is None], skipped


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
    say = progress or _quiet
    reason = measure.unavailable_reason()
    if reason is not None:
        return _skip_all(facts_before, reason, PER_GPU_CHECKS, "standard")
    usable, results = _usable_targets(facts_before, PER_GPU_CHECKS, "standard")
    if not usable:
        results.append(skip("gpu.allreduce_busbw", "no GPU could be measured"))
    for target in usable:
        results.extend(_measure_gpu(target, say))
    if len(usable) >= 2:
        results.append(_measure_allreduce(usable, facts_before, allreduce_sizes, say))
    elif usable:
        results.append(skip("gpu.allreduce_busbw", "one GPU: an all-reduce needs at least 2"))
    results.extend(_regather(facts_before, gather, "standard", say))
    return results


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
    lines = [
        f"batches of 20 products + 1 copy: {report.batches}; {len(report.tflops)} windows of "
        f">= {burn.WINDOW_S:g} s GPU time",
        "tflops: " + ", ".join(f"{x:.1f}" for x in report.tflops),
        "copy_gbps: " + ", ".join(f"{x:.0f}" for x in report.copy_gbps),
    ]
    ratio = burn.stability(report.tflops) or 0.0
    stab = THRESHOLDS["gpu.burn_in_stability"]
    results = [
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
    return results


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
    say = progress or _quiet
    reason = measure.unavailable_reason()
    if reason is not None:
        return _skip_all(facts_before, reason, BURN_IN_CHECKS, "burn-in")
    usable, results = _usable_targets(facts_before, BURN_IN_CHECKS, "burn-in")
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
    results.extend(_regather(facts_before, gather, "burn-in", say))
    return results
