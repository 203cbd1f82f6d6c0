# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""PCIe checks: each GPU's link, links below capability on the paths that matter, and the
measured host copy rates (their measuring functions are in gpurack.gpubench).

A downgraded link matters on a GPU, a bridge between a GPU and its root port, an RDMA NIC
or an NVMe controller. Elsewhere (platform bridges, the onboard BMC NIC) it is reported as
information: a pass that says what it saw.
"""

from __future__ import annotations

from typing import NamedTuple

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.context import (
    Context,
    not_expected,
    per_gpu,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.expect import ExpectKey
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.registry import (
    EXPECT,
    WARN_FLOOR,
    CheckSpec,
    check,
    measured,
    result,
    skip,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_model_type import pcie_ceiling_gbps
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_views import GpuView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci_views import (
    PciDeviceView,
    PciFactsView,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult


class _Link(NamedTuple):
    gen: int
    gen_max: int
    width: int
    width_max: int


def _pcie(gpu: GpuView) -> _Link | None:
    """The GPU's PCIe link (current and maximum), when all four values are known."""
    paths = ("pcie.gen_current", "pcie.gen_max", "pcie.width_current", "pcie.width_max")
    values = [gpu.field(path) for path in paths]
    return None if any(v is None for v in values) else _Link(*values)


def _pcie_line(comp: str, p: _Link) -> str:
    return f"{comp} PCIe gen {p.gen}/{p.gen_max}, width x{p.width}/x{p.width_max}"


CURRENT_VS_MAX = CheckSpec(
    "gpu.pcie.current_vs_max",
    "GPU PCIe link at capability",
    "quick",
    "current PCIe link width and generation of each GPU against the link's maximum",
    "width equal to the maximum (fail); generation below the maximum warns, since idle GPUs lower it",
    "vendor doc: NVIDIA nvidia-smi manual (PCIe link, current vs max)",
    "reseat the GPU or its riser and check the slot; a narrower link halves host bandwidth; "
    "re-measure the generation under load (standard tier gpu.h2d_bandwidth)",
)


@check(CURRENT_VS_MAX)
def check_pcie_current_vs_max(ctx: Context) -> list[CheckResult]:
    def judge(gpu: GpuView, p: _Link) -> CheckResult:
        comp = gpu.component()
        if p.width < p.width_max:
            verdict = "fail"
            reason = f"{comp} PCIe link runs at x{p.width}, its maximum is x{p.width_max}"
        elif p.gen < p.gen_max:
            verdict = "warn"
            reason = (
                f"{comp} PCIe link runs at Gen{p.gen}, its maximum is Gen{p.gen_max} "
                "(normal when the GPU is idle)"
            )
        else:
            verdict, reason = "pass", ""
        return result(
            CURRENT_VS_MAX,
            verdict,
            component=comp,
            measured={"gen": p.gen, "width": p.width},
            expected={"gen": p.gen_max, "width": p.width_max},
            reason=reason,
            source=ctx.gpu_source(),
            lines=[_pcie_line(comp, p)],
        )

    return per_gpu(ctx, CURRENT_VS_MAX, _pcie, judge, "PCIe link state not reported")


EXPECTED = CheckSpec(
    "gpu.pcie.expected",
    "GPU PCIe link as expected",
    "quick",
    "maximum PCIe generation and current width of each GPU",
    "generation and width at least gpurack_expect.gpu.pcie {gen, width}",
    f"{EXPECT}.gpu.pcie",
    "check BIOS PCIe settings (forced generation, bifurcation), risers and slot wiring",
    expects=(
        ExpectKey("gpu.pcie.gen", "choice", "PCIe generation.", (1, 2, 3, 4, 5, 6)),
        ExpectKey("gpu.pcie.width", "choice", "Link width (lanes).", (1, 2, 4, 8, 16, 32)),
    ),
)


@check(EXPECTED)
def check_pcie_expected(ctx: Context) -> list[CheckResult]:
    want = ctx.want("gpu.pcie")
    if not want:
        return [not_expected(EXPECTED, "gpu.pcie")]

    def judge(gpu: GpuView, p: _Link) -> CheckResult:
        comp = gpu.component()
        short = []
        if "gen" in want and p.gen_max < want["gen"]:
            short.append(f"link capable of Gen{p.gen_max} only, expected Gen{want['gen']}")
        if "width" in want and p.width < want["width"]:
            short.append(f"link at x{p.width}, expected x{want['width']}")
        return result(
            EXPECTED,
            "fail" if short else "pass",
            component=comp,
            measured={"gen": p.gen_max, "width": p.width},
            expected=dict(want),
            reason=f"{comp}: {'; '.join(short)}" if short else None,
            source=ctx.gpu_source(),
            lines=[_pcie_line(comp, p)],
        )

    return per_gpu(ctx, EXPECTED, _pcie, judge, "PCIe link state not reported")


SLOT = CheckSpec(
    "gpu.pcie.slot",
    "GPU in a slot of its PCIe generation",
    "quick",
    "maximum PCIe generation of each GPU against that of its host slot (nvidia-smi R5xx and later: "
    "max_device_link_gen, max_host_link_gen)",
    "the slot allows the GPU's generation (warn); no finding when the driver does not report both",
    "vendor doc: NVIDIA nvidia-smi manual (PCIe generation: device max, host max)",
    "move the GPU to a slot, riser or retimer of its own generation, and check that the BIOS does not "
    "force a lower one: each generation down halves the host bandwidth",
)


def _gens(gpu: GpuView) -> tuple[int, int] | None:
    device, host = gpu.field("pcie.gen_max_device"), gpu.field("pcie.gen_max_host")
    return None if device is None or host is None else (device, host)


@check(SLOT)
def check_pcie_slot(ctx: Context) -> list[CheckResult]:
    def judge(gpu: GpuView, gens: tuple[int, int]) -> CheckResult:
        comp = gpu.component()
        device, host = gens
        slower = host < device
        return result(
            SLOT,
            "warn" if slower else "pass",
            component=comp,
            measured={"device_gen": device, "host_gen": host},
            expected={"host_gen": device},
            reason=f"{comp} can run PCIe Gen{device}, its host slot allows Gen{host}" if slower else None,
            source=ctx.gpu_source(),
            lines=[f"{comp} PCIe max generation: device Gen{device}, host slot Gen{host}"],
        )

    return per_gpu(
        ctx,
        SLOT,
        _gens,
        judge,
        "device or host-slot PCIe generation not reported (N/A in a VM, absent before R5xx drivers)",
    )


DOWNGRADED = CheckSpec(
    "pci.downgraded",
    "No downgraded PCIe links on GPU, RDMA or NVMe paths",
    "quick",
    "PCIe devices whose link runs below its capability (lspci LnkSta '(downgraded)'): GPUs, the "
    "bridges between a GPU and its root port, RDMA NICs and NVMe controllers; other devices are "
    "listed as information",
    "none on those paths (warn)",
    "vendor doc: PCI Express base specification (link training)",
    "reseat the device or riser, check BIOS link settings; compare with the platform's slot map",
)


def _path_roles(pci: PciFactsView, gpu_buses: set[str]) -> dict[str, str]:
    """Bus id -> why it matters: a GPU, a bridge upstream of GPU x, an RDMA NIC, NVMe."""
    roles: dict[str, str] = {}
    for device in pci.devices():
        bus = str(device.field("bus_id"))
        if device.is_nvidia_gpu() or bus in gpu_buses:
            roles[bus] = "a GPU"
            for bridge in pci.upstream_chain(bus):
                roles.setdefault(bridge, f"the path of GPU {bus}")
        elif device.is_rdma():
            roles[bus] = "an RDMA NIC"
        elif device.is_nvme():
            roles[bus] = "an NVMe controller"
    return roles


def _downgraded(pci: PciFactsView, bus: str, dev: PciDeviceView, role: str | None) -> CheckResult:
    speed, width = dev.field("link.sta_speed_gts"), dev.field("link.sta_width")
    cap_speed, cap_width = dev.field("link.cap_speed_gts"), dev.field("link.cap_width")
    name = f"PCI {bus} ({dev.field('description')})"
    text = f"{name} links at {speed} GT/s x{width}, capable of {cap_speed} GT/s x{cap_width}"
    if role is None:
        verdict = "pass"
        reason = f"{text}; not on a GPU, RDMA or NVMe path: information only"
    else:
        verdict, reason = "warn", text
    return result(
        DOWNGRADED,
        verdict,
        component=f"PCI {bus}",
        measured={"speed_gts": speed, "width": width},
        expected={"speed_gts": cap_speed, "width": cap_width},
        reason=reason,
        source=str(pci.field("source")),
        lines=[f"{bus} {dev.field('description')}"] + ([f"{bus} is {role}"] if role else [text]),
    )


@check(DOWNGRADED)
def check_pci_downgraded(ctx: Context) -> list[CheckResult]:
    pci = ctx.pci()
    if pci is None:
        return [skip(DOWNGRADED, "no PCI facts were gathered (gpurack_pci missing or unavailable)")]
    downgraded = [str(b) for b in pci.field("downgraded") or []]
    source = str(pci.field("source"))
    if not downgraded:
        return [result(DOWNGRADED, "pass", measured=[], expected=[], source=source)]
    gpus, _why_none = ctx.gpus()
    roles = _path_roles(pci, {str(g.field("bus_id")) for g in gpus})
    devices = {str(d.field("bus_id")): d for d in pci.devices()}
    return [_downgraded(pci, b, devices.get(b, PciDeviceView({})), roles.get(b)) for b in downgraded]


# --- measured (gpurack.gpubench measures these) ------------------------------------------------

_GEN5_X16 = round(pcie_ceiling_gbps(5, 16), 3)

H2D_BANDWIDTH = measured(
    "gpu.h2d_bandwidth",
    "Host-to-device bandwidth",
    "standard",
    "pinned host-to-device copy rate per GPU, GB/s",
    share_of=f"the model's PCIe ceiling (Gen5 x16: {_GEN5_X16:g} GB/s)",
    remediation="check the PCIe link (gpu.pcie.*), NUMA placement and IOMMU settings",
    model_field="pcie_h2d_gbps",
    ratios=(0.80, WARN_FLOOR),
    threshold_source="pinned copies over a healthy PCIe link reach 85-90 % of the raw rate (TLP "
    f"headers and flow control take the rest; a real H200 on Gen5 x16 gave 55.5 of {_GEN5_X16:g} "
    "GB/s): pass >= 80 %, warn >= 60 %, fail below (a link running at half width or one "
    "generation down lands there)",
    module=__name__,
)

D2H_BANDWIDTH = measured(
    "gpu.d2h_bandwidth",
    "Device-to-host bandwidth",
    "standard",
    "pinned device-to-host copy rate per GPU, GB/s",
    share_of="the model's PCIe ceiling",
    remediation="check the PCIe link (gpu.pcie.*), NUMA placement and IOMMU settings",
    model_field="pcie_h2d_gbps",
    ratios=(0.80, WARN_FLOOR),
    threshold_source="as H2D: pinned copies reach 85-90 % of the raw PCIe rate (a real H200 gave "
    f"55.3 of {_GEN5_X16:g} GB/s): pass >= 80 %, warn >= 60 %, fail below",
    module=__name__,
)
