# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""GPU inventory checks: how many GPUs, seen on the bus, which model, how much memory."""

from __future__ import annotations

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
    result,
    skip,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_models import (
    find_model,
    resolve_model,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_views import GpuView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.view import count as count_of
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult

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


def smi_listed(ctx: Context) -> bool:
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
    smi_buses = {str(g.field("bus_id")) for g in gpus} if smi_listed(ctx) else set()
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
