# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""GPU health checks: Xid events, persistence mode, MIG mode, the recovery action, clock events."""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.context import (
    Context,
    field,
    per_gpu,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.gpu.inventory import smi_listed
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.registry import (
    CheckSpec,
    check,
    result,
    skip,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.xid import xid_info
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_views import GpuView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult, Verdict

GPU_XID = CheckSpec(
    "gpu.xid",
    "No critical Xid events",
    "quick",
    "NVIDIA Xid events in the kernel log since boot",
    "no critical Xid (fail); warn-level Xids warn",
    "vendor doc: NVIDIA Xid catalogue (see table below)",
    "follow the resolution of the Xid in the table below",
)

_BUS = re.compile(
    r"(?:(?P<domain>[0-9a-f]{4,8}):)?(?P<bus>[0-9a-f]{2}:[0-9a-f]{2})(?:\.[0-7])?", re.IGNORECASE
)


def _bus_key(bus_id: Any) -> str | None:
    # dmesg prints "PCI:0000:9b:00" (no function), facts "0000:9b:00.0": compare bus:device.
    match = _BUS.search(str(bus_id or ""))
    return match.group("bus").lower() if match else None


def _gpu_for_bus(gpus: list[GpuView], bus_id: Any) -> str:
    key = _bus_key(bus_id)
    if key is None:
        return "node"
    for gpu in gpus:
        if _bus_key(gpu.field("bus_id")) == key:
            return gpu.component()
    return f"PCI {bus_id}"


_XID_VERDICT = {"critical": Verdict.FAIL, "warn": Verdict.WARN, "info": Verdict.PASS}


@check(GPU_XID)
def check_xid(ctx: Context) -> list[CheckResult]:
    os_facts = ctx.os()
    events = os_facts.xid_events() if os_facts is not None else None
    if events is None:
        return [skip(GPU_XID, "no kernel log facts were gathered (gpurack_os.xid_events missing)")]
    events = [e for e in events if isinstance(e.field("xid"), int)]
    if not events:
        return [result(GPU_XID, "pass", measured=[], expected=[], source="dmesg")]
    gpus, _why_none = ctx.gpus()
    grouped: dict[tuple[str, int], list[Any]] = {}
    for event in events:
        grouped.setdefault((_gpu_for_bus(gpus, event.field("bus_id")), event.field("xid")), []).append(event)
    out = []
    for (comp, code), group in grouped.items():
        info = xid_info(code)
        verdict = _XID_VERDICT[info.severity]
        out.append(
            result(
                GPU_XID,
                verdict,
                component=comp,
                measured={"xid": code, "count": len(group)},
                expected=None,
                reason=f"{comp}: Xid {code} ({info.name}), {len(group)} event(s), "
                f"last at {group[-1].field('time')}",
                remediation=info.resolution if verdict is not Verdict.PASS else None,
                source="dmesg",
                lines=[f"[{e.field('time')}] Xid {code}: {e.field('message')}" for e in group[-5:]],
                limit_source=f"NVIDIA Xid catalogue: Xid {code} is {info.severity}",
            )
        )
    return out


GPU_PERSISTENCE = CheckSpec(
    "gpu.persistence",
    "Persistence mode",
    "quick",
    "persistence mode of each GPU",
    "enabled",
    "vendor doc: NVIDIA driver persistence (nvidia-persistenced)",
    "enable and start nvidia-persistenced (systemctl enable --now nvidia-persistenced)",
)


@check(GPU_PERSISTENCE)
def check_persistence(ctx: Context) -> list[CheckResult]:
    def judge(gpu: GpuView, on: Any) -> CheckResult:
        comp = gpu.component()
        return result(
            GPU_PERSISTENCE,
            "pass" if on else "warn",
            component=comp,
            measured=on,
            expected=True,
            reason=None if on else f"{comp}: persistence mode is off",
            source=ctx.gpu_source(),
            lines=[f"{comp} persistence mode: {'enabled' if on else 'disabled'}"],
        )

    return per_gpu(ctx, GPU_PERSISTENCE, field("persistence_mode"), judge, "persistence mode not reported")


GPU_MIG = CheckSpec(
    "gpu.mig_mode",
    "MIG mode as the pool shares GPUs",
    "quick",
    "current and pending MIG mode of each GPU against the pool's sharing",
    "MIG disabled (or unsupported) in a full-gpu pool, enabled in a mig pool (fail); a pending "
    "change the other way warns; time-slicing pools set no MIG mode",
    "gpurack_pool.sharing (DESIGN.md: the device plugin shares GPUs by it)",
    "set the GPU's MIG mode to what the pool's sharing asks for (nvidia-smi -i <index> -mig 0|1, then "
    "reset the GPU), or move the node to a pool that shares GPUs as it is set up",
)

_MIG_WANTED = {"full-gpu": False, "mig": True}


def _mig_remedy(index: Any, want: bool, supported: bool) -> str:
    if not supported:
        return "this GPU has no MIG: move the node to a full-gpu or time-slicing pool"
    if want:
        return (
            f"enable MIG (nvidia-smi -i {index} -mig 1), reset the GPU (nvidia-smi -r -i {index}) and create "
            "the pool's MIG instances (the GPU Operator's MIG manager does this from nvidia.com/mig.config); "
            "or move the node to a full-gpu pool"
        )
    return (
        f"disable MIG (nvidia-smi -i {index} -mig 0) and reset the GPU (nvidia-smi -r -i {index}) or reboot; "
        "or move the node to a mig pool"
    )


def _mig_text(mode: Any) -> str:
    return "unsupported" if mode is None else ("enabled" if mode else "disabled")


@check(GPU_MIG)
def check_mig_mode(ctx: Context) -> list[CheckResult]:
    sharing = ctx.pool_setting("sharing")
    if sharing is None:
        return [skip(GPU_MIG, "not checked: gpurack_pool.sharing is not set")]
    if sharing not in _MIG_WANTED:
        return [skip(GPU_MIG, f"not checked: pool sharing {sharing} asks for no MIG mode")]
    want = _MIG_WANTED[sharing]
    pool = ctx.pool_setting("name") or "the pool"

    def modes(gpu: GpuView) -> Any:
        # nvidia-smi prints MIG mode N/A on GPUs without MIG; a PCI scan knows nothing.
        return (gpu.field("mig_mode"), gpu.field("mig_mode_pending")) if smi_listed(ctx) else None

    def judge(gpu: GpuView, mig: Any) -> CheckResult:
        comp = gpu.component()
        current, pending = mig
        verdict, reason = "pass", None
        if bool(current) != want:
            verdict = "fail"
            reason = f"{comp} has MIG {_mig_text(current)}, but {pool} shares GPUs as {sharing}"
        elif pending is not None and pending != want:
            verdict = "warn"
            reason = (
                f"{comp}: MIG becomes {_mig_text(pending)} at the next GPU reset, "
                f"but {pool} shares GPUs as {sharing}"
            )
        return result(
            GPU_MIG,
            verdict,
            component=comp,
            measured={"current": current, "pending": pending},
            expected={"current": want, "sharing": sharing},
            reason=reason,
            remediation=_mig_remedy(gpu.field("index"), want, current is not None) if reason else None,
            source=ctx.gpu_source(),
            lines=[f"{comp} MIG mode: current {_mig_text(current)}, pending {_mig_text(pending)}"],
        )

    return per_gpu(ctx, GPU_MIG, modes, judge, "MIG mode not reported (no nvidia-smi)")


GPU_RECOVERY = CheckSpec(
    "gpu.recovery_action",
    "No GPU recovery action",
    "quick",
    "'GPU Recovery Action' nvidia-smi reports for each GPU",
    "None",
    "vendor doc: NVIDIA nvidia-smi manual (GPU Recovery Action)",
    "do what it says: Reset -> drain and reset the GPU; Reboot -> drain and reboot; Drain -> drain, "
    "then reset",
)

_RECOVERY = {
    "reset": "drain the node and reset the GPU (nvidia-smi -r -i <index>)",
    "reboot": "drain the node and reboot it",
    "drain": "drain the node, then reset the GPU; replace it if the action returns",
}


@check(GPU_RECOVERY)
def check_recovery_action(ctx: Context) -> list[CheckResult]:
    def judge(gpu: GpuView, action: Any) -> CheckResult:
        comp = gpu.component()
        ok = str(action).strip().lower() == "none"
        return result(
            GPU_RECOVERY,
            "pass" if ok else "fail",
            component=comp,
            measured=action,
            expected="None",
            reason=None if ok else f"{comp}: the driver asks for recovery action '{action}'",
            remediation=None if ok else _RECOVERY.get(str(action).strip().lower()),
            source=ctx.gpu_source(),
            lines=[f"{comp} GPU Recovery Action: {action}"],
        )

    return per_gpu(
        ctx,
        GPU_RECOVERY,
        field("recovery_action"),
        judge,
        "GPU recovery action not reported (driver older than R550?)",
    )


GPU_CLOCKS = CheckSpec(
    "gpu.clocks_event_reasons",
    "No hardware clock slowdown",
    "quick",
    "active clock event (throttle) reasons of each GPU",
    "no HW slowdown, HW thermal slowdown, HW power brake or SW thermal slowdown (warn)",
    "vendor doc: NVIDIA nvidia-smi manual (Clocks Event Reasons)",
    "check cooling (fans, inlet temperature, airflow) and the power supply; a power brake points "
    "at the PSUs or the BMC power cap",
)

_SLOWDOWN = re.compile(r"hw_slowdown|hw_thermal|hw_power_brake|sw_thermal")


@check(GPU_CLOCKS)
def check_clocks_event_reasons(ctx: Context) -> list[CheckResult]:
    def judge(gpu: GpuView, reasons: Any) -> CheckResult:
        comp = gpu.component()
        bad = [str(r) for r in reasons if _SLOWDOWN.search(str(r).lower())]
        return result(
            GPU_CLOCKS,
            "warn" if bad else "pass",
            component=comp,
            measured=list(reasons),
            expected=[],
            reason=f"{comp}: clocks held down by {', '.join(bad)}" if bad else None,
            source=ctx.gpu_source(),
            lines=[f"{comp} active clock event reasons: {', '.join(map(str, reasons))}"],
        )

    return per_gpu(ctx, GPU_CLOCKS, field("clocks_event_reasons"), judge, "clock event reasons not reported")
