# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""GPU checks: inventory (count, model, memory), health flags, Xid events, clocks; the GPU's measured
compute checks (their measuring functions are in gpurack.gpubench)."""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.context import (
    Context,
    field,
    not_expected,
    per_gpu,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.expect import ExpectKey
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.registry import (
    EXPECT,
    CheckSpec,
    check,
    measured,
    register,
    result,
    skip,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.xid import xid_info
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_models import (
    find_model,
    resolve_model,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_views import GpuView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.view import count as count_of
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult, Verdict

WARN_FLOOR = 0.60

GPU_COUNT = CheckSpec(
    "gpu.count",
    "GPU count",
    "quick",
    "number of GPUs nvidia-smi lists (or NVIDIA display devices on the PCI bus without a driver)",
    "equal to gpurack_expect.gpu.count",
    f"{EXPECT}.gpu.count",
    "reseat or replace the missing GPU; check that the driver loads (dmesg | grep NVRM) and that "
    "nvidia-smi lists every GPU lspci shows",
    expects=(ExpectKey("gpu.count", "count", "Number of GPUs (C(0) asserts a node has none)."),),
)


def _nvidia_pci_devices(ctx: Context) -> list[str] | None:
    pci = ctx.pci()
    if pci is None:
        return None
    return [str(d.field("bus_id")) for d in pci.devices() if d.is_nvidia_gpu()]


def _no_gpu_reason(ctx: Context, expected: int) -> str:
    gpu = ctx.gpu()
    source = str((gpu.field("source") if gpu is not None else None) or "none")
    smi = "nvidia-smi lists no GPUs" if source.startswith("nvidia-smi") else "nvidia-smi not found"
    on_bus = _nvidia_pci_devices(ctx)
    if on_bus:
        pci = f"{len(on_bus)} NVIDIA devices on the PCI bus: {', '.join(on_bus)}"
    else:
        pci = "no NVIDIA PCI devices"
    return f"no GPUs found ({smi} and {pci}), expected {expected}"


# What names one physical GPU; a value nvidia-smi prints for "unknown" names none.
_IDENTITY_FIELDS = ("uuid", "serial", "bus_id")
_NO_IDENTITY = ("", "n/a", "[n/a]", "none", "0", "00000000")


def _duplicates(gpus: list[GpuView]) -> tuple[int, list[str]]:
    """How many entries repeat a GPU listed before them (same UUID, serial or bus id), and why.

    A capture or facts that list one GPU twice must not count it twice: a node with one H200
    listed twice would otherwise pass a two-GPU expectation.
    """
    first: dict[tuple[str, str], int] = {}
    repeats: dict[int, str] = {}
    for position, gpu in enumerate(gpus):
        for name in _IDENTITY_FIELDS:
            value = str(gpu.field(name) or "").strip()
            if value.lower() in _NO_IDENTITY:
                continue
            seen = first.setdefault((name, value), position)
            if seen != position and position not in repeats:
                repeats[position] = (
                    f"entry {position + 1}, {gpu.component()}, repeats entry {seen + 1},"
                    f" {gpus[seen].component()} (same {name} {value})"
                )
    return len(repeats), list(repeats.values())


@check(GPU_COUNT)
def check_gpu_count(ctx: Context) -> list[CheckResult]:
    if ctx.gpu() is None:
        return [skip(GPU_COUNT, "no GPU facts were gathered (gpurack_gpu missing)")]
    gpus, _why_none = ctx.gpus()
    repeated, repeats = _duplicates(gpus)
    count = len(gpus) - repeated
    expected = ctx.want("gpu.count")
    if expected is None and not repeats:
        return [not_expected(GPU_COUNT, "gpu.count", count)]
    lines = [f"{g.component()} {g.field('name')}" for g in gpus] + repeats
    reason = None
    if repeats:
        reason = f"the same GPU is listed more than once, {count} distinct: {'; '.join(repeats)}"
    elif expected is None:
        reason = None
    elif count == 0 and expected != 0:
        reason = _no_gpu_reason(ctx, expected)
    elif count != expected:
        reason = f"{count} GPUs found, expected {expected}"
        seen = {str(g.field("bus_id")) for g in gpus}
        unseen = [b for b in _nvidia_pci_devices(ctx) or [] if b not in seen]
        if unseen:
            reason += f"; on the PCI bus but not listed: {', '.join(unseen)}"
    return [
        result(
            GPU_COUNT,
            "fail" if reason else "pass",
            measured=count,
            expected=expected,
            reason=reason,
            source=ctx.gpu_source(),
            lines=lines,
        )
    ]


GPU_PCI_VISIBLE = CheckSpec(
    "gpu.pci_visible",
    "nvidia-smi lists every GPU on the PCI bus",
    "quick",
    "GPUs nvidia-smi lists against the NVIDIA display and 3D controllers on the PCI bus (lspci or sysfs)",
    "the same number, and every GPU on the bus listed (fail)",
    "facts: nvidia-smi and the PCI bus of the same node",
    "a GPU on the bus that nvidia-smi does not list has fallen off the driver: check dmesg | grep NVRM "
    "(Xid 79, RmInitAdapter failed), reset or reseat it, replace it if it stays missing",
)


def _smi_listed(ctx: Context) -> bool:
    """Whether the GPU list came from nvidia-smi (not from a PCI scan)."""
    gpu = ctx.gpu()
    return gpu is not None and str(gpu.field("source")).startswith("nvidia-smi")


def _smi_count(ctx: Context) -> int | None:
    """What nvidia-smi listed; facts gathered before nvidia_smi_count existed give it by source."""
    gpu = ctx.gpu()
    if gpu is None:
        return None
    listed = count_of(gpu.field("nvidia_smi_count"))
    if listed is None and str(gpu.field("source")).startswith("nvidia-smi"):
        listed = len(gpu.gpus())
    return listed


def _gpus_on_bus(ctx: Context) -> list[str] | None:
    """Bus ids of the NVIDIA GPUs on the PCI bus (PCI facts, and the GPU facts' own PCI scan)."""
    buses = _nvidia_pci_devices(ctx)
    gpu = ctx.gpu()
    if gpu is not None and gpu.field("source") == "pci-scan":
        buses = [*(buses or []), *(str(g.field("bus_id")) for g in gpu.gpus())]
    return sorted(set(buses)) if buses is not None else None


@check(GPU_PCI_VISIBLE)
def check_gpu_pci_visible(ctx: Context) -> list[CheckResult]:
    listed = _smi_count(ctx)
    gpus, why = ctx.gpus()
    facts = ctx.gpu()
    if facts is None or facts.field("available") is False:
        return [skip(GPU_PCI_VISIBLE, str(why))]  # the reason every GPU check gives
    if listed is None:
        # Before prepare installs the driver there is no nvidia-smi; a broken one is the
        # nvidia_driver role's to fix (it asserts the loaded driver), not a count to compare.
        return [
            skip(GPU_PCI_VISIBLE, "nvidia-smi listed nothing (not installed or failed): nothing to compare")
        ]
    on_bus = _gpus_on_bus(ctx)
    if on_bus is None:
        return [skip(GPU_PCI_VISIBLE, "no PCI facts were gathered (gpurack_pci missing or unavailable)")]
    smi_buses = {str(g.field("bus_id")) for g in gpus} if _smi_listed(ctx) else set()
    unseen = [bus for bus in on_bus if bus not in smi_buses]
    reason = None
    if listed != len(on_bus) or unseen:
        reason = f"nvidia-smi lists {listed} GPU(s), the PCI bus shows {len(on_bus)}"
        if unseen:
            reason += f"; not listed by nvidia-smi: {', '.join(unseen)}"
    return [
        result(
            GPU_PCI_VISIBLE,
            "fail" if reason else "pass",
            measured={"nvidia_smi": listed, "pci": len(on_bus)},
            expected={"nvidia_smi": len(on_bus), "pci": len(on_bus)},
            reason=reason,
            source="nvidia-smi; PCI bus (lspci or sysfs)",
            lines=[f"PCI {bus}: {'' if bus in smi_buses else 'not '}listed by nvidia-smi" for bus in on_bus],
        )
    ]


GPU_MODEL = CheckSpec(
    "gpu.model",
    "GPU model",
    "quick",
    "product name of each GPU",
    "same model as gpurack_expect.gpu.model (product name or accelerator label)",
    f"{EXPECT}.gpu.model",
    "move the node to a pool that expects this model, or fix gpurack_expect.gpu.model",
    expects=(
        ExpectKey(
            "gpu.model", "text", "Product name as nvidia-smi prints it, e.g. C(NVIDIA H100 80GB HBM3)."
        ),
    ),
)


def _same_model(name: str, device_id: Any, expected: str) -> bool:
    if name.casefold() == expected.strip().casefold():
        return True
    actual = resolve_model(name, device_id if isinstance(device_id, str) else None)
    if expected.strip().lower() == actual.slug:
        return True
    wanted = find_model(expected)
    return wanted is not None and wanted is actual


@check(GPU_MODEL)
def check_gpu_model(ctx: Context) -> list[CheckResult]:
    expected = ctx.want("gpu.model")
    if expected is None:
        return [not_expected(GPU_MODEL, "gpu.model")]

    def judge(gpu: GpuView, name: Any) -> CheckResult:
        comp = gpu.component()
        ok = _same_model(str(name), gpu.field("pci_device_id"), expected)
        return result(
            GPU_MODEL,
            "pass" if ok else "fail",
            component=comp,
            measured=name,
            expected=expected,
            reason=None if ok else f"{comp} is a {name}, expected {expected}",
            source=ctx.gpu_source(),
            lines=[f"{comp} name: {name}"],
        )

    return per_gpu(ctx, GPU_MODEL, field("name"), judge, "GPU product name not reported")


GPU_MEMORY = CheckSpec(
    "gpu.memory",
    "GPU memory",
    "quick",
    "total framebuffer memory of each GPU, MiB",
    "at least gpurack_expect.gpu.min_memory_mib",
    f"{EXPECT}.gpu.min_memory_mib",
    "compare with the model table; a GPU short of memory has the wrong SKU or a fault: replace it",
    expects=(ExpectKey("gpu.min_memory_mib", "count", "Smallest acceptable memory per GPU, in MiB."),),
)


@check(GPU_MEMORY)
def check_gpu_memory(ctx: Context) -> list[CheckResult]:
    expected = ctx.want("gpu.min_memory_mib")
    if expected is None:
        return [not_expected(GPU_MEMORY, "gpu.min_memory_mib")]

    def judge(gpu: GpuView, mib: Any) -> CheckResult:
        comp = gpu.component()
        ok = mib >= expected
        return result(
            GPU_MEMORY,
            "pass" if ok else "fail",
            component=comp,
            measured=mib,
            expected=expected,
            unit="MiB",
            reason=None if ok else f"{comp} has {mib} MiB, expected at least {expected} MiB",
            source=ctx.gpu_source(),
            lines=[f"{comp} memory total: {mib} MiB"],
        )

    return per_gpu(ctx, GPU_MEMORY, field("memory_total_mib"), judge, "GPU memory size not reported")


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
        return (gpu.field("mig_mode"), gpu.field("mig_mode_pending")) if _smi_listed(ctx) else None

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


# --- measured (gpurack.gpubench measures these) ------------------------------------------------

BF16_MATMUL = measured(
    "gpu.bf16_matmul",
    "BF16 matrix throughput",
    "standard",
    "bf16 8192^3 matrix product rate per GPU, TFLOPS",
    share_of="the model's dense BF16 peak",
    remediation="check clocks, power cap and cooling; replace the GPU if it stays low",
    model_field="bf16_dense_tflops",
    ratios=(0.75, WARN_FLOOR),
    threshold_source="the datasheet dense bf16 rate is a boost-clock peak; ten 8192^3 products on "
    "random data right after a short warm-up run at boost clocks before the power controller "
    "clamps them (H200s here: 767-799 of 989 TFLOP/s, 78-81 %; after 0.5 s of load they settle "
    "near 660, 67 %, which the burn-in tier judges): pass >= 75 %, warn >= 60 %, fail below",
    module=__name__,
)

COUNTERS_DELTA = register(
    CheckSpec(
        "counters.delta",
        "No error counters rising under load",
        "standard",
        "change of ECC, PCIe replay and row-remap counters, new Xid events and RDMA port counters "
        "across the load run",
        "no increase",
        "measurement: counters before and after the standard-tier run",
        "the component whose counter rose is faulty or badly seated: reseat, then replace",
    ),
    __name__,
)

BURN_IN_THROUGHPUT = measured(
    "gpu.burn_in_throughput",
    "BF16 throughput under sustained load",
    "burn-in",
    "median bf16 8192^3 product rate per GPU over the burn-in windows, every GPU loaded at once, TFLOPS",
    share_of="the model's dense BF16 peak",
    remediation="check clocks, power cap and cooling (gpu.burn_in_throttle); replace the GPU if it stays low",
    model_field="bf16_dense_tflops",
    ratios=(0.60, 0.50),
    threshold_source="sustained bf16 under the power cap, with device copies between products, runs "
    "below the short-burst rate (2 H200s at 700 W: 655-665 of 989 TFLOP/s, 66-67 %, over 30 s, "
    "clocks ~1440 MHz, reason sw_power_cap): pass >= 60 %, warn >= 50 %, fail below",
    module=__name__,
)

BURN_IN_STABILITY = measured(
    "gpu.burn_in_stability",
    "Steady throughput under sustained load",
    "burn-in",
    "slowest over median per-window bf16 rate of each GPU during the burn-in",
    share_of="the median window (min/median ratio)",
    remediation="a rate that sags over the run points at cooling or power delivery: check fans, inlet "
    "temperature and PSUs, then rerun; replace the GPU if one GPU alone sags",
    model_field=None,
    ratios=(0.90, 0.80),
    threshold_source="min/median of per-window bf16 rates over the burn-in: a steady GPU at its power "
    "cap varies by a few percent; a window 10 % below the median means clocks fell (thermal or "
    "power brake), 20 % below is a fault: pass >= 0.90, warn >= 0.80, fail below",
    limit_source="measurement: per-window rates of the burn-in run",
    module=__name__,
)

BURN_IN_CONSISTENCY = register(
    CheckSpec(
        "gpu.burn_in_consistency",
        "Repeatable results under sustained load",
        "burn-in",
        "batches of the burn-in whose product differs from the first product",
        "none (fail)",
        "measurement: every product compared with the first (a correct GPU is deterministic here)",
        "the same product gave different results: drain the node, run NVIDIA's field diagnostics "
        "(dcgmi diag -r 3) and replace the GPU if they fail",
    ),
    __name__,
)

BURN_IN_THROTTLE = register(
    CheckSpec(
        "gpu.burn_in_throttle",
        "No hardware clock slowdown under load",
        "burn-in",
        "clock event reasons and temperature of each GPU, sampled with nvidia-smi during the burn-in",
        "no hw_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown (fail) or sw_thermal_slowdown "
        "(warn); sw_power_cap is normal under full load",
        "vendor doc: NVIDIA nvidia-smi manual (Clocks Event Reasons)",
        "check cooling (fans, inlet temperature, airflow) and the power supply; a power brake points "
        "at the PSUs or the BMC power cap",
    ),
    __name__,
)
