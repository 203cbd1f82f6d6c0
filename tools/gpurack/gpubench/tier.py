"""The standard and burn-in tiers: measured checks on a node's GPUs, then counter deltas.

`run_standard` measures each GPU in turn (pinned H2D/D2H, device copy, bf16 matrix product),
then the all-reduce across all of them, re-reads the facts and compares error counters.
`run_burn_in` loads every GPU at once for a set time and judges throughput, stability and
throttling. Both return check results (`results.make_result`), never raise for a node fault.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils._check_catalogue import spec
from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_models import GpuModel, find_model
from ansible_collections.gpurack.bootstrap.plugins.module_utils._xid_catalogue import xid_info

from gpurack.gpubench import allreduce, burn, measure
from gpurack.gpubench.limits import (
    THRESHOLDS,
    Limit,
    allreduce_limit,
    bf16_limit,
    hbm_limit,
    pcie_limit,
)
from gpurack.gpubench.results import Result, TierName, Verdict, judged, make_result, skip, worst

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
    fact: Mapping[str, Any]
    model: GpuModel | None
    skip_reason: str | None = None


def _quiet(_: str) -> None:
    return None


def gpu_section(facts: Mapping[str, Any]) -> Mapping[str, Any]:
    """`gpurack_gpu` of a facts dict (also accepts the bare `gpu` key); {} when absent."""
    section = facts.get("gpurack_gpu", facts.get("gpu"))
    return section if isinstance(section, Mapping) else {}


def _gpus(facts: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    gpus = gpu_section(facts).get("gpus")
    return [g for g in gpus if isinstance(g, Mapping)] if isinstance(gpus, list) else []


def component_of(gpu: Mapping[str, Any]) -> str:
    """`GPU 3 (0000:19:00.0)`, the component name the quick tier uses."""
    bus = gpu.get("bus_id")
    return f"GPU {gpu.get('index')} ({bus})" if bus else f"GPU {gpu.get('index')}"


def _norm_uuid(uuid: Any) -> str | None:
    if not isinstance(uuid, str) or not uuid:
        return None
    text = uuid.strip().lower()
    return text[4:] if text.startswith("gpu-") else text


def targets(facts: Mapping[str, Any], devices: Sequence[Mapping[str, Any]]) -> list[GpuTarget]:
    """Pair each GPU of the facts with the CUDA device that is the same GPU (uuid, then bus id).

    Without GPU facts (no nvidia-smi), the CUDA devices themselves are the targets.
    """
    gpus = _gpus(facts)
    if not gpus:
        return [
            GpuTarget(
                index=int(d["index"]),
                cuda=int(d["index"]),
                component=component_of(d),
                fact=d,
                model=find_model(d.get("name")),
            )
            for d in devices
        ]
    by_uuid = {_norm_uuid(d.get("uuid")): int(d["index"]) for d in devices if d.get("uuid")}
    by_bus = {str(d.get("bus_id")).lower(): int(d["index"]) for d in devices if d.get("bus_id")}
    identified = bool(by_uuid or by_bus)
    found = []
    for pos, gpu in enumerate(gpus):
        cuda = by_uuid.get(_norm_uuid(gpu.get("uuid")))
        if cuda is None and gpu.get("bus_id"):
            cuda = by_bus.get(str(gpu["bus_id"]).lower())
        if cuda is None and not identified and len(gpus) == len(devices):
            cuda = int(devices[pos]["index"])  # no ids on either side: same count, same order
        reason = None
        if gpu.get("mig_mode") is True:
            reason = "MIG mode is enabled: measured checks need the whole GPU (disable MIG to run them)"
        elif cuda is None:
            reason = "GPU not visible to CUDA in this process (CUDA_VISIBLE_DEVICES or a container limit?)"
        index = gpu.get("index")
        found.append(
            GpuTarget(
                index=index if isinstance(index, int) else pos,
                cuda=cuda,
                component=component_of(gpu),
                fact=gpu,
                model=find_model(gpu.get("name"), gpu.get("pci_device_id")),
                skip_reason=reason,
            )
        )
    return found


def nvlink_connected(facts: Mapping[str, Any], model: GpuModel | None) -> tuple[bool, str]:
    """Whether the GPUs talk over NVLink, and the evidence: topology, else links, else the model."""
    section = gpu_section(facts)
    topology = section.get("topology")
    if isinstance(topology, Mapping) and isinstance(topology.get("links"), Mapping):
        pairs = [
            str(kind)
            for src, row in topology["links"].items()
            if str(src).startswith("GPU") and isinstance(row, Mapping)
            for dst, kind in row.items()
            if str(dst).startswith("GPU")
        ]
        if pairs:
            nv = any(kind.startswith("NV") for kind in pairs)
            return nv, f"nvidia-smi topo -m: GPU pairs linked by {', '.join(sorted(set(pairs)))}"
    links: list[Any] = [
        link for g in _gpus(facts) if isinstance(g.get("nvlinks"), list) for link in g["nvlinks"]
    ]
    if links:
        active = any(isinstance(link, Mapping) and link.get("active") for link in links)
        return active, f"nvidia-smi nvlink -s: {'active' if active else 'no active'} NVLinks"
    has = model is not None and bool(model.nvlinks_per_gpu)
    return has, "no topology or NVLink facts: assumed from the model table's form factor"


def _lines(measurement: measure.Measurement) -> list[str]:
    return measurement.evidence_lines()


def _measure_gpu(target: GpuTarget, progress: Progress) -> list[Result]:
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
            results.append(skip(check_id, target.component, str(exc)))
            continue
        except RuntimeError as exc:  # CUDA errors (out of memory, a GPU fault) surface as RuntimeError
            results.append(
                make_result(
                    check_id,
                    target.component,
                    "fail",
                    reason=f"measurement failed: {exc}".strip()[:500],
                    remediation="check for other processes on the GPU (nvidia-smi) and Xid events in the "
                    "kernel log (dmesg | grep Xid); rerun on an idle GPU",
                    duration_s=round(time.monotonic() - t0, 3),
                )
            )
            continue
        result = judged(
            check_id,
            target.component,
            m.value,
            m.unit,
            limit,
            source=m.method,
            lines=_lines(m),
            duration_s=m.duration_s,
        )
        results.append(result)
        verdict = result["verdict"]
        progress(f"{target.component} {check_id}: {m.value:.4g} {m.unit} ({verdict}, {m.duration_s:.1f} s)")
    return results


def _measure_allreduce(
    usable: Sequence[GpuTarget], facts: Mapping[str, Any], sizes: Sequence[int], progress: Progress
) -> Result:
    """Bus bandwidth of an all-reduce across `usable` GPUs, judged at the first size."""
    check_id = "gpu.allreduce_busbw"
    model = usable[0].model
    connected, topo_evidence = nvlink_connected(facts, model)
    limits = [lim for t in usable if (lim := allreduce_limit(t.fact, t.model, connected)) is not None]
    limit = min(limits, key=lambda lim: lim.value) if len(limits) == len(usable) else None
    try:
        res = allreduce.run_allreduce([t.cuda for t in usable if t.cuda is not None], sizes=sizes)
    except allreduce.AllReduceError as exc:
        return make_result(
            check_id,
            NODE,
            "fail",
            reason=str(exc)[:500],
            remediation="check NVLink state (nvidia-smi nvlink -s), fabric manager and NCCL "
            "(rerun with NCCL_DEBUG=INFO)",
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
    result = judged(
        check_id,
        NODE,
        first.busbw_gbps,
        "GB/s",
        limit,
        source=res.method,
        lines=lines,
        duration_s=res.duration_s,
        ranks=res.ranks,
        points=points,
    )
    verdict = result["verdict"]
    progress(
        f"all-reduce x{res.ranks}: {first.busbw_gbps:.1f} GB/s busbw ({verdict}, {res.duration_s:.1f} s)"
    )
    return result


# Counters compared across the run: (path below a GPU's facts, label, verdict when it rises).
_GPU_COUNTERS: tuple[tuple[tuple[str, ...], str, Verdict], ...] = (
    (("ecc_errors", "volatile_uncorrected"), "ECC volatile uncorrected", "fail"),
    (("ecc_errors", "volatile_corrected"), "ECC volatile corrected", "warn"),
    (("remapped_rows", "uncorrectable"), "rows remapped for uncorrectable errors", "fail"),
    (("remapped_rows", "correctable"), "rows remapped for correctable errors", "warn"),
    (("retired_pages", "double_bit"), "pages retired for double-bit errors", "fail"),
    (("retired_pages", "single_bit"), "pages retired for single-bit errors", "warn"),
    # The facts schema may grow these; compared when both sides have them.
    (("pcie", "replays"), "PCIe replays", "warn"),
    (("pcie", "replay_rollovers"), "PCIe replay rollovers", "warn"),
    (("pcie", "replay_counter"), "PCIe replays", "warn"),
)
_GPU_FLAGS: tuple[tuple[tuple[str, ...], str, Verdict], ...] = (
    (("remapped_rows", "pending"), "row remap pending (needs a GPU reset)", "warn"),
    (("remapped_rows", "failure"), "row remapping failed", "fail"),
    (("retired_pages", "pending"), "page retirement pending", "warn"),
)


def _dig(data: Any, path: Sequence[str]) -> Any:
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _nvlink_errors(gpu: Mapping[str, Any]) -> dict[str, int]:
    """Error counters of the NVLinks when the facts carry them: `{link N <counter>: value}`."""
    found: dict[str, int] = {}
    for link in gpu.get("nvlinks") or []:
        if not isinstance(link, Mapping):
            continue
        for key, value in link.items():
            counters = (
                value if isinstance(value, Mapping) and key in ("errors", "error_counters") else {key: value}
            )
            for name, count in counters.items():
                if "error" in str(name) and _count(count) is not None:
                    found[f"NVLink {link.get('link')} {name}"] = int(count)
    return found


def _xid_key(event: Mapping[str, Any]) -> tuple[Any, ...]:
    return (event.get("time"), event.get("bus_id"), event.get("xid"), event.get("message"))


def new_xids(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Xid events in `after` that `before` did not have (as a multiset: repeats count)."""

    def events(facts: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        os_facts = facts.get("gpurack_os", facts.get("os"))
        raw = os_facts.get("xid_events") if isinstance(os_facts, Mapping) else None
        return [e for e in raw if isinstance(e, Mapping)] if isinstance(raw, list) else []

    seen = Counter(_xid_key(e) for e in events(before))
    fresh = []
    for event in events(after):
        key = _xid_key(event)
        if seen[key] > 0:
            seen[key] -= 1
        else:
            fresh.append(event)
    return fresh


def _gpu_key(gpu: Mapping[str, Any]) -> str:
    return _norm_uuid(gpu.get("uuid")) or str(gpu.get("bus_id") or gpu.get("index"))


def counter_deltas(
    before: Mapping[str, Any], after: Mapping[str, Any], tier: TierName = "standard"
) -> list[Result]:
    """`counters.delta` results: one per GPU, per RDMA port whose counters rose, and per stray Xid."""
    check_id = "counters.delta"
    after_gpus = {_gpu_key(g): g for g in _gpus(after)}
    xids = new_xids(before, after)
    results: list[Result] = []
    matched_buses: set[str] = set()
    for gpu in _gpus(before):
        component = component_of(gpu)
        now = after_gpus.get(_gpu_key(gpu))
        if now is None:
            results.append(
                make_result(
                    check_id,
                    component,
                    "fail",
                    tier=tier,
                    measured=None,
                    expected="no increase",
                    unit="count",
                    reason="GPU missing from the facts after the run (fell off the bus?)",
                    remediation="check dmesg for Xid 79 / 'fallen off the bus'; reseat or replace the GPU",
                    source="facts before and after the run",
                )
            )
            continue
        verdicts: list[Verdict] = []
        lines: list[str] = []
        deltas: dict[str, int] = {}
        for path, label, verdict in _GPU_COUNTERS:
            old, new = _count(_dig(gpu, path)), _count(_dig(now, path))
            if old is None or new is None:
                continue
            lines.append(f"{label} ({'.'.join(path)}): {old} -> {new}")
            if new > old:
                deltas[label] = new - old
                verdicts.append(verdict)
        for path, label, verdict in _GPU_FLAGS:
            old_flag, new_flag = _dig(gpu, path), _dig(now, path)
            if new_flag is True and old_flag is not True:
                lines.append(f"{label} ({'.'.join(path)}): {old_flag} -> {new_flag}")
                deltas[label] = 1
                verdicts.append(verdict)
        old_nv, new_nv = _nvlink_errors(gpu), _nvlink_errors(now)
        for name, new_count in sorted(new_nv.items()):
            if name in old_nv and new_count > old_nv[name]:
                lines.append(f"{name}: {old_nv[name]} -> {new_count}")
                deltas[name] = new_count - old_nv[name]
                verdicts.append("warn")
        bus = str(gpu.get("bus_id") or "").lower()
        matched_buses.add(bus)
        for event in (e for e in xids if bus and str(e.get("bus_id", "")).lower() == bus):
            info = xid_info(int(event.get("xid") or 0))
            lines.append(f"new Xid {info.code} ({info.name}): {event.get('message')}; {info.resolution}")
            deltas[f"Xid {info.code}"] = deltas.get(f"Xid {info.code}", 0) + 1
            verdicts.append("fail")
        verdict = worst(verdicts)
        reason = (
            "no error counter rose during the run"
            if not deltas
            else "rose during the run: " + ", ".join(f"{k} +{v}" for k, v in deltas.items())
        )
        results.append(
            make_result(
                check_id,
                component,
                verdict,
                tier=tier,
                measured=sum(deltas.values()),
                expected=0,
                unit="count",
                reason=reason,
                source="facts before and after the run (gpurack_gpu, gpurack_os)",
                lines=lines,
                deltas=deltas,
            )
        )
    stray = [e for e in xids if str(e.get("bus_id", "")).lower() not in matched_buses]
    if stray:
        lines = [f"new Xid {e.get('xid')} on {e.get('bus_id')}: {e.get('message')}" for e in stray]
        results.append(
            make_result(
                check_id,
                NODE,
                "fail",
                tier=tier,
                measured=len(stray),
                expected=0,
                unit="count",
                reason=f"{len(stray)} new Xid event(s) during the run on devices not in the GPU facts",
                source="gpurack_os.xid_events before and after the run",
                lines=lines,
            )
        )
    results.extend(_rdma_deltas(before, after, tier))
    return results


def _rdma_deltas(before: Mapping[str, Any], after: Mapping[str, Any], tier: TierName) -> list[Result]:
    """A warn per RDMA port whose error counters rose (symbol errors, link downs, ...)."""

    def ports(facts: Mapping[str, Any]) -> dict[tuple[Any, Any], Mapping[str, Any]]:
        nic = facts.get("gpurack_nic", facts.get("nic"))
        rdma = nic.get("rdma") if isinstance(nic, Mapping) else None
        if not isinstance(rdma, list):
            return {}
        return {(p.get("device"), p.get("port")): p for p in rdma if isinstance(p, Mapping)}

    results = []
    now_ports = ports(after)
    for key, port in ports(before).items():
        now = now_ports.get(key)
        old_c, new_c = port.get("counters"), (now or {}).get("counters")
        if not isinstance(old_c, Mapping) or not isinstance(new_c, Mapping):
            continue
        rose = {}
        for name, old_value in old_c.items():
            old, new = _count(old_value), _count(new_c.get(name))
            if old is not None and new is not None and new > old:
                rose[str(name)] = new - old
        if rose:
            results.append(
                make_result(
                    "counters.delta",
                    f"{key[0]} port {key[1]}",
                    "warn",
                    tier=tier,
                    measured=sum(rose.values()),
                    expected=0,
                    unit="count",
                    source="gpurack_nic.rdma[].counters before and after the run",
                    reason="rose during the run: " + ", ".join(f"{k} +{v}" for k, v in rose.items()),
                    lines=[f"{k}: {old_c[k]} -> {new_c[k]}" for k in rose],
                    deltas=rose,
                )
            )
    return results


def _regather(
    facts_before: Mapping[str, Any], gather: Gather, tier: TierName, progress: Progress
) -> list[Result]:
    t0 = time.monotonic()
    try:
        after = gather()
    # Whatever stops the re-read (a hung tool, malformed output) means "could not assess", not a crash.
    except Exception as exc:
        return [skip("counters.delta", NODE, f"could not re-read the facts after the run: {exc}", tier=tier)]
    results = counter_deltas(facts_before, after, tier)
    progress(f"counters re-read and compared ({time.monotonic() - t0:.1f} s)")
    for result in results:
        result["duration_s"] = round(time.monotonic() - t0, 3)
    return results


def _skip_all(
    facts: Mapping[str, Any], reason: str, check_ids: Sequence[str], tier: TierName
) -> list[Result]:
    gpus = _gpus(facts)
    components = [component_of(g) for g in gpus] or [NODE]
    results = [skip(c, comp, reason, tier=tier) for comp in components for c in check_ids]
    if tier == "standard" and len(gpus) != 1:
        results.append(skip("gpu.allreduce_busbw", NODE, reason))
    results.append(skip("counters.delta", NODE, f"nothing was measured: {reason}", tier=tier))
    return results


def _usable_targets(
    facts_before: Mapping[str, Any], check_ids: Sequence[str], tier: TierName
) -> tuple[list[GpuTarget], list[Result]]:
    all_targets = targets(facts_before, measure.visible_devices())
    skipped = [
        skip(c, t.component, t.skip_reason, tier=tier)
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
) -> list[Result]:
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
        results.append(skip("gpu.allreduce_busbw", NODE, "no GPU could be measured"))
    for target in usable:
        results.extend(_measure_gpu(target, say))
    if len(usable) >= 2:
        results.append(_measure_allreduce(usable, facts_before, allreduce_sizes, say))
    elif usable:
        results.append(skip("gpu.allreduce_busbw", NODE, "one GPU: an all-reduce needs at least 2"))
    results.extend(_regather(facts_before, gather, "standard", say))
    return results


def _throttle_result(target: GpuTarget, samples: Sequence[burn.SmiSample], smi_error: str | None) -> Result:
    check_id = "gpu.burn_in_throttle"
    mine = [s for s in samples if s.index == target.index]
    if not mine:
        return skip(
            check_id,
            target.component,
            f"no nvidia-smi samples: {smi_error or 'GPU not listed'}",
            tier="burn-in",
        )
    seen = Counter(r for s in mine for r in s.reasons)
    hot = max((s.temperature_c for s in mine if s.temperature_c is not None), default=None)
    bad = sorted(r for r in seen if r in burn.THROTTLE_FAIL)
    soft = sorted(r for r in seen if r in burn.THROTTLE_WARN)
    verdict: Verdict = "fail" if bad else "warn" if soft else "pass"
    summary = ", ".join(f"{r} in {n}/{len(mine)} samples" for r, n in sorted(seen.items())) or "none"
    lines = [
        f"t={s.at_s:g}s temp={s.temperature_c} C sm={s.sm_clock_mhz} MHz power={s.power_w} W "
        f"reasons={','.join(s.reasons) or '-'}"
        for s in mine
    ]
    return make_result(
        check_id,
        target.component,
        verdict,
        tier="burn-in",
        measured=hot,
        unit="C",
        expected=spec(check_id).limit,
        reason=f"clock event reasons seen: {summary}; hottest {hot} C",
        source=f"nvidia-smi --query-gpu={','.join(burn.SMI_FIELDS)} every sample interval",
        lines=lines,
    )


def _burn_results(target: GpuTarget, report: burn.WorkerReport, method: str) -> list[Result]:
    comp = target.component
    if report.error or not report.tflops:
        why = report.error or "no measurement window completed"
        return [
            make_result(c, comp, "fail", tier="burn-in", reason=f"burn-in worker failed: {why}"[:500])
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
        make_result(
            "gpu.burn_in_stability",
            comp,
            stab.verdict(ratio, 1.0),
            tier="burn-in",
            measured=round(ratio, 3),
            expected=stab.pass_ratio,
            unit="min/median",
            limit_source=stab.source,
            source=method,
            lines=lines,
            reason=f"slowest window {min(report.tflops):.1f} TFLOP/s, median {median:.1f}: ratio {ratio:.3f}",
        ),
        make_result(
            "gpu.burn_in_consistency",
            comp,
            "fail" if report.mismatches else "pass",
            tier="burn-in",
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
) -> list[Result]:
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
        results.append(skip("counters.delta", NODE, "no GPU could be loaded", tier="burn-in"))
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
