# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The one catalogue of node checks: what each measures, its limit and where that comes from.

Check functions (`_checks.py` for the quick tier, `gpurack.gpubench` for the standard and
burn-in tiers) take titles, remediation and the pass/warn thresholds of measured checks from
here; `docs/checks.md` is `render_catalogue_markdown()`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_models import (
    GpuModel,
    pcie_ceiling_gbps,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils._xid_catalogue import render_xid_markdown

Tier = Literal["quick", "standard", "burn-in"]
TIERS: tuple[Tier, ...] = ("quick", "standard", "burn-in")


@dataclass(frozen=True)
class CheckSpec:
    """One check: id, title, tier, what it measures, its limit and the limit's source.

    Measured checks also carry their threshold: a measurement of at least `pass_ratio` of its
    limit passes, at least `warn_ratio` warns, less fails; `threshold_source` says why. Where
    the limit is a GPU model-table field, `model_field` names it (e.g. "hbm_tbps").
    """

    id: str
    title: str
    tier: Tier
    measures: str
    limit: str
    limit_source: str
    remediation: str
    model_field: str | None = None
    pass_ratio: float | None = None
    warn_ratio: float | None = None
    threshold_source: str | None = None


_EXPECT = "gpurack_expect"
_MODEL_TABLE = "GPU model table (docs/labels.md), from the model's datasheet; thresholds below"
_GEN5_X16 = round(pcie_ceiling_gbps(5, 16), 3)
_WARN_FLOOR = 0.60


def _measured(
    check_id: str,
    title: str,
    tier: Tier,
    measures: str,
    *,
    share_of: str,
    remediation: str,
    model_field: str | None,
    ratios: tuple[float, float],
    threshold_source: str,
    limit_source: str = _MODEL_TABLE,
) -> CheckSpec:
    """A measured check whose limit text is written from its own pass/warn ratios."""
    pass_ratio, warn_ratio = ratios
    return CheckSpec(
        check_id,
        title,
        tier,
        measures,
        f"at least {pass_ratio:.0%} of {share_of}; warn from {warn_ratio:.0%}",
        limit_source,
        remediation,
        model_field=model_field,
        pass_ratio=pass_ratio,
        warn_ratio=warn_ratio,
        threshold_source=threshold_source,
    )


CATALOGUE: tuple[CheckSpec, ...] = (
    CheckSpec(
        "gpu.count",
        "GPU count",
        "quick",
        "number of GPUs nvidia-smi lists (or NVIDIA display devices on the PCI bus without a driver)",
        "equal to gpurack_expect.gpu.count",
        f"{_EXPECT}.gpu.count",
        "reseat or replace the missing GPU; check that the driver loads (dmesg | grep NVRM) and that "
        "nvidia-smi lists every GPU lspci shows",
    ),
    CheckSpec(
        "gpu.model",
        "GPU model",
        "quick",
        "product name of each GPU",
        "same model as gpurack_expect.gpu.model (product name or accelerator label)",
        f"{_EXPECT}.gpu.model",
        "move the node to a pool that expects this model, or fix gpurack_expect.gpu.model",
    ),
    CheckSpec(
        "gpu.memory",
        "GPU memory",
        "quick",
        "total framebuffer memory of each GPU, MiB",
        "at least gpurack_expect.gpu.min_memory_mib",
        f"{_EXPECT}.gpu.min_memory_mib",
        "compare with the model table; a GPU short of memory has the wrong SKU or a fault: replace it",
    ),
    CheckSpec(
        "gpu.pcie.current_vs_max",
        "GPU PCIe link at capability",
        "quick",
        "current PCIe link width and generation of each GPU against the link's maximum",
        "width equal to the maximum (fail); generation below the maximum warns, since idle GPUs lower it",
        "vendor doc: NVIDIA nvidia-smi manual (PCIe link, current vs max)",
        "reseat the GPU or its riser and check the slot; a narrower link halves host bandwidth; "
        "re-measure the generation under load (standard tier gpu.h2d_bandwidth)",
    ),
    CheckSpec(
        "gpu.pcie.expected",
        "GPU PCIe link as expected",
        "quick",
        "maximum PCIe generation and current width of each GPU",
        "generation and width at least gpurack_expect.gpu.pcie {gen, width}",
        f"{_EXPECT}.gpu.pcie",
        "check BIOS PCIe settings (forced generation, bifurcation), risers and slot wiring",
    ),
    CheckSpec(
        "gpu.nvlink.links",
        "NVLink links",
        "quick",
        "NVLink links per GPU from nvidia-smi nvlink -s, active and inactive",
        "no inactive link; active links at least gpurack_expect.gpu.nvlinks_per_gpu",
        f"{_EXPECT}.gpu.nvlinks_per_gpu; model table (H100/H200 SXM 18, A100 SXM 12)",
        "reset the GPU; if the link stays down, reseat the baseboard or replace the GPU; on NVSwitch "
        "systems check nvidia-fabricmanager",
    ),
    CheckSpec(
        "gpu.ecc.mode",
        "ECC enabled",
        "quick",
        "current ECC mode of each GPU",
        "enabled (fail on datacenter models, warn on models where ECC is optional)",
        "vendor doc: NVIDIA datacenter GPU deployment guide (ECC on by default)",
        "enable ECC (nvidia-smi -i <index> -e 1) and reset the GPU or reboot",
    ),
    CheckSpec(
        "gpu.ecc.uncorrected",
        "No uncorrected ECC errors",
        "quick",
        "volatile and aggregate uncorrected ECC error counts of each GPU",
        "volatile 0 (fail); aggregate 0 (warn: errors from earlier boots)",
        "vendor doc: NVIDIA GPU memory error management",
        "drain the node and reset the GPU; replace it if uncorrected errors recur",
    ),
    CheckSpec(
        "gpu.remapped_rows.pending",
        "No pending row remaps",
        "quick",
        "whether a row remap waits for a GPU reset",
        "not pending",
        "vendor doc: NVIDIA GPU memory error management (row remapping)",
        "drain the node and reset the GPU (nvidia-smi -r -i <index>) so the pending remap takes effect",
    ),
    CheckSpec(
        "gpu.remapped_rows.failure",
        "No row remapping failure",
        "quick",
        "whether row remapping has failed (no spare rows left)",
        "no failure",
        "vendor doc: NVIDIA GPU memory error management (row remapping)",
        "drain the node and replace the GPU (RMA): it has run out of spare rows",
    ),
    CheckSpec(
        "gpu.retired_pages.pending",
        "No pending page retirement",
        "quick",
        "whether a retired page waits for a GPU reset (pre-Ampere GPUs)",
        "not pending",
        "vendor doc: NVIDIA GPU memory error management (dynamic page retirement)",
        "drain the node and reset the GPU so the retirement takes effect",
    ),
    CheckSpec(
        "gpu.xid",
        "No critical Xid events",
        "quick",
        "NVIDIA Xid events in the kernel log since boot",
        "no critical Xid (fail); warn-level Xids warn",
        "vendor doc: NVIDIA Xid catalogue (see table below)",
        "follow the resolution of the Xid in the table below",
    ),
    CheckSpec(
        "gpu.persistence",
        "Persistence mode",
        "quick",
        "persistence mode of each GPU",
        "enabled",
        "vendor doc: NVIDIA driver persistence (nvidia-persistenced)",
        "enable and start nvidia-persistenced (systemctl enable --now nvidia-persistenced)",
    ),
    CheckSpec(
        "gpu.recovery_action",
        "No GPU recovery action",
        "quick",
        "'GPU Recovery Action' nvidia-smi reports for each GPU",
        "None",
        "vendor doc: NVIDIA nvidia-smi manual (GPU Recovery Action)",
        "do what it says: Reset -> drain and reset the GPU; Reboot -> drain and reboot; Drain -> drain, "
        "then reset",
    ),
    CheckSpec(
        "gpu.clocks_event_reasons",
        "No hardware clock slowdown",
        "quick",
        "active clock event (throttle) reasons of each GPU",
        "no HW slowdown, HW thermal slowdown, HW power brake or SW thermal slowdown (warn)",
        "vendor doc: NVIDIA nvidia-smi manual (Clocks Event Reasons)",
        "check cooling (fans, inlet temperature, airflow) and the power supply; a power brake points "
        "at the PSUs or the BMC power cap",
    ),
    CheckSpec(
        "driver.version",
        "Driver version",
        "quick",
        "NVIDIA driver version",
        "equal to gpurack_expect.driver.version, or on the branch gpurack_expect.driver.branch",
        f"{_EXPECT}.driver",
        "install the expected driver (nvidia_driver role, nvidia_driver_branch) and reboot",
    ),
    CheckSpec(
        "cuda.version",
        "CUDA version supported by the driver",
        "quick",
        "highest CUDA version the driver supports (nvidia-smi 'CUDA Version')",
        "at least gpurack_expect.cuda.version",
        f"{_EXPECT}.cuda.version",
        "install a driver branch that supports the expected CUDA version",
    ),
    CheckSpec(
        "fabricmanager",
        "Fabric manager running",
        "quick",
        "state of the nvidia-fabricmanager service (gpurack_os.services) on NVSwitch systems",
        "active when the GPUs sit behind NVSwitches",
        "vendor doc: NVIDIA Fabric Manager user guide",
        "install nvidia-fabricmanager matching the driver version and start it "
        "(systemctl enable --now nvidia-fabricmanager)",
    ),
    CheckSpec(
        "gpu.nic.numa_affinity",
        "GPU and RDMA NIC on one NUMA node",
        "quick",
        "NUMA node of each GPU and of the RDMA ports",
        "an RDMA port on the GPU's NUMA node (warn)",
        "vendor doc: NVIDIA GPUDirect RDMA (PCIe topology)",
        "check the rack's cabling plan and the slots of GPUs and NICs; pin jobs to the local NIC",
    ),
    CheckSpec(
        "rdma.ports.count",
        "RDMA port count",
        "quick",
        "number of RDMA ports",
        "at least gpurack_expect.rdma.ports",
        f"{_EXPECT}.rdma.ports",
        "check that every HCA is seated and its driver (mlx5_core) is loaded; see ibstat",
    ),
    CheckSpec(
        "rdma.ports.state",
        "RDMA ports up",
        "quick",
        "state and physical state of each RDMA port (of the expected link layer when given)",
        "ACTIVE and LinkUp",
        "vendor doc: NVIDIA MLNX_OFED / ibstat port states",
        "check the cable and switch port; an INIT port waits for the subnet manager (opensm/UFM)",
    ),
    CheckSpec(
        "rdma.ports.rate",
        "RDMA port rate",
        "quick",
        "link rate of each RDMA port, Gb/s",
        "at least gpurack_expect.rdma.rate_gbps",
        f"{_EXPECT}.rdma.rate_gbps",
        "check cable type and switch port speed; reseat the transceiver",
    ),
    CheckSpec(
        "rdma.ports.link_layer",
        "RDMA link layer",
        "quick",
        "link layer of the RDMA ports (InfiniBand or Ethernet for RoCE)",
        "gpurack_expect.rdma.ports ports (or at least one) with gpurack_expect.rdma.link_layer",
        f"{_EXPECT}.rdma.link_layer",
        "set the port type with mlxconfig (LINK_TYPE_P1=1 for IB, 2 for Ethernet) and reboot",
    ),
    CheckSpec(
        "numa.nodes",
        "NUMA node count",
        "quick",
        "number of NUMA nodes",
        "equal to gpurack_expect.numa_nodes",
        f"{_EXPECT}.numa_nodes",
        "check BIOS NUMA settings (NPS / sub-NUMA clustering) against the pool's expectation",
    ),
    CheckSpec(
        "nvme.count",
        "NVMe data disks",
        "quick",
        "number of NVMe namespaces that do not hold the OS",
        "equal to gpurack_expect.nvme.count",
        f"{_EXPECT}.nvme.count",
        "reseat or replace the missing drive; check the backplane and BIOS NVMe settings",
    ),
    CheckSpec(
        "os.cgroup_v2",
        "cgroup v2",
        "quick",
        "cgroup version of the host",
        "gpurack_expect.os.cgroup_version, else 2 (warn)",
        "vendor doc: Kubernetes cgroup v2 (v1 deprecated)",
        "boot with systemd.unified_cgroup_hierarchy=1 (the os_tuning role does this)",
    ),
    CheckSpec(
        "os.nouveau_absent",
        "nouveau not loaded",
        "quick",
        "whether the nouveau module is loaded",
        "not loaded",
        "vendor doc: NVIDIA driver installation guide",
        "blacklist nouveau (modprobe.d), rebuild the initramfs and reboot (the nvidia_driver role does this)",
    ),
    CheckSpec(
        "pci.downgraded",
        "No downgraded PCIe links",
        "quick",
        "PCIe devices whose link runs below its capability (lspci LnkSta '(downgraded)')",
        "none (warn)",
        "vendor doc: PCI Express base specification (link training)",
        "reseat the device or riser, check BIOS link settings; compare with the platform's slot map",
    ),
    _measured(
        "gpu.h2d_bandwidth",
        "Host-to-device bandwidth",
        "standard",
        "pinned host-to-device copy rate per GPU, GB/s",
        share_of=f"the model's PCIe ceiling (Gen5 x16: {_GEN5_X16:g} GB/s)",
        remediation="check the PCIe link (gpu.pcie.*), NUMA placement and IOMMU settings",
        model_field="pcie_h2d_gbps",
        ratios=(0.80, _WARN_FLOOR),
        threshold_source="pinned copies over a healthy PCIe link reach 85-90 % of the raw rate (TLP "
        f"headers and flow control take the rest; a real H200 on Gen5 x16 gave 55.5 of {_GEN5_X16:g} "
        "GB/s): pass >= 80 %, warn >= 60 %, fail below (a link running at half width or one "
        "generation down lands there)",
    ),
    _measured(
        "gpu.d2h_bandwidth",
        "Device-to-host bandwidth",
        "standard",
        "pinned device-to-host copy rate per GPU, GB/s",
        share_of="the model's PCIe ceiling",
        remediation="check the PCIe link (gpu.pcie.*), NUMA placement and IOMMU settings",
        model_field="pcie_h2d_gbps",
        ratios=(0.80, _WARN_FLOOR),
        threshold_source="as H2D: pinned copies reach 85-90 % of the raw PCIe rate (a real H200 gave "
        f"55.3 of {_GEN5_X16:g} GB/s): pass >= 80 %, warn >= 60 %, fail below",
    ),
    _measured(
        "gpu.d2d_bandwidth",
        "Device memory bandwidth",
        "standard",
        "device-to-device copy rate (bytes read plus written) per GPU, TB/s",
        share_of="the model's HBM bandwidth",
        remediation="check clocks (gpu.clocks_event_reasons) and ECC errors; replace the GPU if it stays low",
        model_field="hbm_tbps",
        ratios=(0.75, _WARN_FLOOR),
        threshold_source="the datasheet HBM rate is the pin-rate peak; a sustained copy loses 10-15 % to "
        "refresh, row switches and read/write turnaround (a real H200 copied 4.26 of 4.8 TB/s, 89 %): "
        "pass >= 75 %, warn >= 60 %, fail below",
    ),
    _measured(
        "gpu.bf16_matmul",
        "BF16 matrix throughput",
        "standard",
        "bf16 8192^3 matrix product rate per GPU, TFLOPS",
        share_of="the model's dense BF16 peak",
        remediation="check clocks, power cap and cooling; replace the GPU if it stays low",
        model_field="bf16_dense_tflops",
        ratios=(0.75, _WARN_FLOOR),
        threshold_source="the datasheet dense bf16 rate is a boost-clock peak; ten 8192^3 products on "
        "random data right after a short warm-up run at boost clocks before the power controller "
        "clamps them (H200s here: 767-799 of 989 TFLOP/s, 78-81 %; after 0.5 s of load they settle "
        "near 660, 67 %, which the burn-in tier judges): pass >= 75 %, warn >= 60 %, fail below",
    ),
    _measured(
        "gpu.allreduce_busbw",
        "All-reduce bus bandwidth",
        "standard",
        "NCCL all-reduce bus bandwidth across the node's GPUs, GB/s",
        share_of="NVLinks per GPU x per-link GB/s on NVLink systems, else the PCIe ceiling",
        remediation="check NVLink state, fabric manager and NCCL topology (NCCL_DEBUG=INFO)",
        model_field="nvlink_gbps_per_gpu",
        ratios=(0.70, _WARN_FLOOR),
        threshold_source="NCCL's ring/tree all-reduce reaches 75-85 % of the per-GPU link rate at GiB "
        "sizes (4 H200s over NVLink gave 359 of 450 GB/s bus bandwidth at 2 GiB): pass >= 70 %, "
        "warn >= 60 %, fail below",
    ),
    CheckSpec(
        "counters.delta",
        "No error counters rising under load",
        "standard",
        "change of ECC, PCIe replay/AER and RDMA symbol/link-down counters across the load run",
        "no increase",
        "measurement: counters before and after the standard-tier run",
        "the component whose counter rose is faulty or badly seated: reseat, then replace",
    ),
    _measured(
        "gpu.burn_in_throughput",
        "BF16 throughput under sustained load",
        "burn-in",
        "median bf16 8192^3 product rate per GPU over the burn-in windows, every GPU loaded at once, TFLOPS",
        share_of="the model's dense BF16 peak",
        remediation="check clocks, power cap and cooling (gpu.burn_in_throttle); replace the GPU if it "
        "stays low",
        model_field="bf16_dense_tflops",
        ratios=(0.60, 0.50),
        threshold_source="sustained bf16 under the power cap, with device copies between products, runs "
        "below the short-burst rate (2 H200s at 700 W: 655-665 of 989 TFLOP/s, 66-67 %, over 30 s, "
        "clocks ~1440 MHz, reason sw_power_cap): pass >= 60 %, warn >= 50 %, fail below",
    ),
    _measured(
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
    ),
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
)

BY_ID: dict[str, CheckSpec] = {c.id: c for c in CATALOGUE}


def spec(check_id: str) -> CheckSpec:
    """The catalogue entry for a check id.

    Raises:
        KeyError: the id is not in the catalogue.
    """
    return BY_ID[check_id]


def checks_for_tier(tier: Tier) -> tuple[CheckSpec, ...]:
    """Checks a run of `tier` includes: its own and every lower tier's."""
    upto = TIERS[: TIERS.index(tier) + 1]
    return tuple(c for c in CATALOGUE if c.tier in upto)


def model_expected(check: CheckSpec, model: GpuModel) -> float | None:
    """What a measurement must reach on `model` to pass (model field x pass ratio), or None."""
    if check.model_field is None or check.pass_ratio is None:
        return None
    value = getattr(model, check.model_field, None)
    if not isinstance(value, (int, float)):
        return None
    return round(value * check.pass_ratio, 3)


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def render_catalogue_markdown() -> str:
    """docs/checks.md, generated from the catalogue (a test keeps the committed file equal)."""
    parts = [
        "# Node checks\n\n",
        "Generated from `plugins/module_utils/_check_catalogue.py` by `render_catalogue_markdown()`; "
        "edit the catalogue, not this file.\n\n",
        "Each result is `{id, title, tier, component, verdict, measured, expected, unit, reason, "
        "remediation, evidence: {source, lines}, limit_source}`; a check gives one result per "
        "component (the node, `GPU 3 (0000:19:00.0)`, `mlx5_5 port 1`). Verdicts: pass, warn, "
        "fail, skip (with a reason). A node passes when no result fails.\n",
    ]
    for tier in TIERS:
        specs = [c for c in CATALOGUE if c.tier == tier]
        if not specs:
            continue
        parts.append(f"\n## {tier.capitalize()} tier\n\n")
        parts.append("| id | title | measures | limit | limit source | remediation |\n")
        parts.append("| --- | --- | --- | --- | --- | --- |\n")
        parts.extend(
            f"| `{c.id}` | {_md(c.title)} | {_md(c.measures)} | {_md(c.limit)} | {_md(c.limit_source)} "
            f"| {_md(c.remediation)} |\n"
            for c in specs
        )
        measured = [c for c in specs if c.pass_ratio is not None]
        if measured:
            parts.append(
                f"\n### Thresholds ({tier} tier)\n\n"
                "A measurement of at least *pass* of its limit passes, at least *warn* warns, less fails.\n\n"
                "| id | limit from | pass | warn | why |\n| --- | --- | --- | --- | --- |\n"
            )
            parts.extend(
                f"| `{c.id}` | {_md(c.model_field or 'measurement')} | {_ratio(c.pass_ratio)} "
                f"| {_ratio(c.warn_ratio)} | {_md(c.threshold_source or '')} |\n"
                for c in measured
            )
    parts.append("\n## Xid catalogue\n\n")
    parts.append(render_xid_markdown())
    return "".join(parts)
