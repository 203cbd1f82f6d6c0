"""Counter deltas: what rose on a node between the facts read before a measured run and after it."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import result, skip, xid_info
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    GpuView,
    NicFactsView,
    OsFactsView,
    XidEventView,
    count,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import CheckResult, Verdict, overall

from gpurack.gpubench.results import TierName
from gpurack.gpubench.targets import Gather, Progress, bus_of, gpu_views, norm_uuid

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
    return norm_uuid(gpu.field("uuid")) or str(gpu.field("bus_id") or gpu.field("index"))


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
    bus = bus_of(gpu)
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
    after_gpus = {_gpu_key(g): g for g in gpu_views(after)}
    xids = new_xids(before, after)
    gpus = gpu_views(before)
    results = [_gpu_delta(gpu, after_gpus.get(_gpu_key(gpu)), xids, tier) for gpu in gpus]
    buses = {bus_of(g) for g in gpus if _gpu_key(g) in after_gpus}
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


def regather(
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
