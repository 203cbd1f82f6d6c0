# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The one catalogue of node checks: what each measures, its limit and where that comes from.

Check functions (`_checks.py` for the quick tier, the benchmark runner for the standard
tier) take titles and remediation from here; `docs/checks.md` is `render_catalogue_markdown()`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_models import GpuModel
from ansible_collections.gpurack.bootstrap.plugins.module_utils._xid_catalogue import render_xid_markdown

Tier = Literal["quick", "standard", "burn-in"]
TIERS: tuple[Tier, ...] = ("quick", "standard", "burn-in")


@dataclass(frozen=True)
class CheckSpec:
    """One check: id, title, tier, what it measures, its limit and the limit's source.

    `model_limit` names a model-table field and the fraction of it a measurement must reach
    (standard tier), e.g. ("hbm_tbps", 0.75).
    """

    id: str
    title: str
    tier: Tier
    measures: str
    limit: str
    limit_source: str
    remediation: str
    model_limit: tuple[str, float] | None = None


_EXPECT = "gpurack_expect"
_MODEL_TABLE = (
    "GPU model table (docs/labels.md), from the model's datasheet; ratios in gpurack.gpubench.limits"
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
    CheckSpec(
        "gpu.h2d_bandwidth",
        "Host-to-device bandwidth",
        "standard",
        "pinned host-to-device copy rate per GPU, GB/s",
        "at least 80% of the model's PCIe ceiling (Gen5 x16: 63 GB/s; warn from 60%)",
        _MODEL_TABLE,
        "check the PCIe link (gpu.pcie.*), NUMA placement and IOMMU settings",
        ("pcie_h2d_gbps", 0.8),
    ),
    CheckSpec(
        "gpu.d2h_bandwidth",
        "Device-to-host bandwidth",
        "standard",
        "pinned device-to-host copy rate per GPU, GB/s",
        "at least 80% of the model's PCIe ceiling (warn from 60%)",
        _MODEL_TABLE,
        "check the PCIe link (gpu.pcie.*), NUMA placement and IOMMU settings",
        ("pcie_h2d_gbps", 0.8),
    ),
    CheckSpec(
        "gpu.d2d_bandwidth",
        "Device memory bandwidth",
        "standard",
        "device-to-device copy rate (bytes read plus written) per GPU, TB/s",
        "at least 75% of the model's HBM bandwidth (warn from 60%)",
        _MODEL_TABLE,
        "check clocks (gpu.clocks_event_reasons) and ECC errors; replace the GPU if it stays low",
        ("hbm_tbps", 0.75),
    ),
    CheckSpec(
        "gpu.bf16_matmul",
        "BF16 matrix throughput",
        "standard",
        "bf16 8192^3 matrix product rate per GPU, TFLOPS",
        "at least 75% of the model's dense BF16 peak (warn from 60%)",
        _MODEL_TABLE,
        "check clocks, power cap and cooling; replace the GPU if it stays low",
        ("bf16_dense_tflops", 0.75),
    ),
    CheckSpec(
        "gpu.allreduce_busbw",
        "All-reduce bus bandwidth",
        "standard",
        "NCCL all-reduce bus bandwidth across the node's GPUs, GB/s",
        "at least 70% of NVLinks per GPU x per-link GB/s on NVLink systems (warn from 60%)",
        _MODEL_TABLE,
        "check NVLink state, fabric manager and NCCL topology (NCCL_DEBUG=INFO)",
        ("nvlink_gbps_per_gpu", 0.7),
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
    """The limit a standard-tier measurement must reach on `model`, or None when unknown."""
    if check.model_limit is None:
        return None
    field, fraction = check.model_limit
    value = getattr(model, field, None)
    if not isinstance(value, (int, float)):
        return None
    return round(value * fraction, 3)


def _md(text: str) -> str:
    return text.replace("|", "\\|")


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
    parts.append("\n## Xid catalogue\n\n")
    parts.append(render_xid_markdown())
    return "".join(parts)
