# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Fabric checks: NVLink and NVSwitch (fabric manager), RDMA ports and their NUMA placement;
the measured all-reduce (its measuring function is in gpurack.gpubench)."""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.context import (
    Context,
    not_expected,
    numa_node,
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
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_views import GpuView, NvLinkView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nic import RdmaPortView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult

NVLINK_LINKS = CheckSpec(
    "gpu.nvlink.links",
    "NVLink links",
    "quick",
    "NVLink links per GPU from nvidia-smi nvlink -s, active and inactive",
    "no inactive link; active links at least gpurack_expect.gpu.nvlinks_per_gpu",
    f"{EXPECT}.gpu.nvlinks_per_gpu; model table (H100/H200 SXM 18, A100 SXM 12)",
    "reset the GPU; if the link stays down, reseat the baseboard or replace the GPU; on NVSwitch "
    "systems check nvidia-fabricmanager",
    expects=(
        ExpectKey("gpu.nvlinks_per_gpu", "count", "Active NVLink links per GPU (18 on HGX H100/H200)."),
    ),
)


def _links_of(gpu: GpuView) -> list[NvLinkView] | None:
    return None if gpu.field("nvlink_source") is None else gpu.nvlinks()


@check(NVLINK_LINKS)
def check_nvlink_links(ctx: Context) -> list[CheckResult]:
    expected = ctx.want("gpu.nvlinks_per_gpu")

    def judge(gpu: GpuView, links: list[NvLinkView]) -> CheckResult:
        comp = gpu.component()
        down = [link.field("link") for link in links if not link.field("active")]
        active = len(links) - len(down)
        problems = []
        if down:
            problems.append(f"NVLink {', '.join(map(str, down))} inactive ({active} of {len(links)} active)")
        if expected is not None and active < expected:
            problems.append(f"{active} active NVLinks, expected {expected}")
        lines = [
            f"{comp} link {link.field('link')}: "
            + (f"{link.field('speed_gbps')} GB/s" if link.field("active") else "inactive")
            for link in links
        ]
        return result(
            NVLINK_LINKS,
            "fail" if problems else "pass",
            component=comp,
            measured={"active": active, "inactive": down},
            expected=expected,
            unit="links",
            reason=f"{comp}: {'; '.join(problems)}" if problems else None,
            source=str(gpu.field("nvlink_source")),
            lines=lines,
        )

    return per_gpu(ctx, NVLINK_LINKS, _links_of, judge, "no NVLink data (nvidia-smi nvlink -s gave none)")


FABRICMANAGER = CheckSpec(
    "fabricmanager",
    "Fabric manager running",
    "quick",
    "state of the nvidia-fabricmanager service (gpurack_os.services) on NVSwitch systems",
    "active when the GPUs sit behind NVSwitches",
    "vendor doc: NVIDIA Fabric Manager user guide",
    "install nvidia-fabricmanager matching the driver version and start it "
    "(systemctl enable --now nvidia-fabricmanager)",
)


@check(FABRICMANAGER)
def check_fabricmanager(ctx: Context) -> list[CheckResult]:
    gpu = ctx.gpu()
    nvswitch = gpu.field("nvswitch") if gpu is not None else None
    if nvswitch is None:
        return [skip(FABRICMANAGER, "NVSwitch presence unknown (no gpurack_gpu.nvswitch fact)")]
    if not nvswitch:
        return [skip(FABRICMANAGER, "no NVSwitch: fabric manager is not needed")]
    os_facts = ctx.os()
    state = os_facts.service_state("nvidia-fabricmanager") if os_facts is not None else None
    if state is None:
        return [
            skip(
                FABRICMANAGER,
                "no service facts: gpurack_os.services['nvidia-fabricmanager'] is not gathered",
            )
        ]
    ok = state == "active"
    return [
        result(
            FABRICMANAGER,
            "pass" if ok else "fail",
            measured=state,
            expected="active",
            reason=None if ok else f"nvidia-fabricmanager is {state} on an NVSwitch system",
            source="systemctl",
            lines=[f"nvidia-fabricmanager: {state}"],
        )
    ]


# --- RDMA ------------------------------------------------------------------------------------

RDMA_PORTS = ExpectKey("rdma.ports", "count", "Number of active RDMA ports.")
RDMA_LINK_LAYER = ExpectKey(
    "rdma.link_layer", "choice", "C(InfiniBand), or C(Ethernet) for RoCE.", ("InfiniBand", "Ethernet")
)
_SYSFS_IB = "sysfs /sys/class/infiniband"

NIC_NUMA = CheckSpec(
    "gpu.nic.numa_affinity",
    "GPU and RDMA NIC on one NUMA node",
    "quick",
    "NUMA node of each GPU and of the RDMA ports",
    "an RDMA port on the GPU's NUMA node (warn)",
    "vendor doc: NVIDIA GPUDirect RDMA (PCIe topology)",
    "check the rack's cabling plan and the slots of GPUs and NICs; pin jobs to the local NIC",
    expects=(RDMA_LINK_LAYER,),
)


@check(NIC_NUMA)
def check_gpu_nic_numa(ctx: Context) -> list[CheckResult]:
    ports, why = ctx.ports()
    if why or not ports:
        return [skip(NIC_NUMA, why or "no RDMA ports")]
    placed = [(p.component(), numa_node(p.field("numa_node"))) for p in ctx.compute_ports(ports)]
    placed = [(c, n) for c, n in placed if n is not None]
    if not placed:
        return [skip(NIC_NUMA, "NUMA node of the RDMA ports unknown")]

    def judge(gpu: GpuView, node: Any) -> CheckResult:
        comp = gpu.component()
        local = [c for c, n in placed if n == node]
        return result(
            NIC_NUMA,
            "pass" if local else "warn",
            component=comp,
            measured={"gpu_numa_node": node, "local_ports": local},
            expected="an RDMA port on the same node",
            reason=None if local else f"{comp} is on NUMA node {node}, no RDMA port is",
            source="nvidia-smi topo -m, sysfs",
            lines=[f"{comp} NUMA {node}"] + [f"{c} NUMA {n}" for c, n in placed],
        )

    return per_gpu(
        ctx, NIC_NUMA, lambda g: numa_node(g.field("numa_node")), judge, "NUMA node of the GPU unknown"
    )


def _port_line(p: RdmaPortView) -> str:
    return (
        f"{p.component()}: {p.field('state')} {p.field('phys_state')} {p.field('rate_gbps')} Gb/s "
        f"{p.field('link_layer')}"
    )


RDMA_COUNT = CheckSpec(
    "rdma.ports.count",
    "RDMA port count",
    "quick",
    "number of RDMA ports",
    "at least gpurack_expect.rdma.ports",
    f"{EXPECT}.rdma.ports",
    "check that every HCA is seated and its driver (mlx5_core) is loaded; see ibstat",
    expects=(RDMA_PORTS,),
)


@check(RDMA_COUNT)
def check_rdma_count(ctx: Context) -> list[CheckResult]:
    ports, why = ctx.ports()
    if why:
        return [skip(RDMA_COUNT, why)]
    expected = ctx.want("rdma.ports")
    if expected is None:
        return [not_expected(RDMA_COUNT, "rdma.ports", len(ports))]
    ok = len(ports) >= expected
    return [
        result(
            RDMA_COUNT,
            "pass" if ok else "fail",
            measured=len(ports),
            expected=expected,
            unit="ports",
            reason=None if ok else f"{len(ports)} RDMA ports found, expected {expected}",
            source=_SYSFS_IB,
            lines=[_port_line(p) for p in ports],
        )
    ]


def _state(value: Any) -> str:
    return re.sub(r"^\d+:\s*", "", str(value)).strip()


RDMA_STATE = CheckSpec(
    "rdma.ports.state",
    "RDMA ports up",
    "quick",
    "state and physical state of each RDMA port (of the expected link layer when given)",
    "ACTIVE and LinkUp",
    "vendor doc: NVIDIA MLNX_OFED / ibstat port states",
    "check the cable and switch port; an INIT port waits for the subnet manager (opensm/UFM)",
    expects=(RDMA_LINK_LAYER,),
)


@check(RDMA_STATE)
def check_rdma_state(ctx: Context) -> list[CheckResult]:
    ports, why = ctx.ports()
    ports = ctx.compute_ports(ports)
    if why or not ports:
        return [skip(RDMA_STATE, why or "no RDMA ports")]
    out = []
    for p in ports:
        comp = p.component()
        state, phys = _state(p.field("state")), _state(p.field("phys_state"))
        ok = state.upper() == "ACTIVE" and (p.field("phys_state") is None or phys.lower() == "linkup")
        out.append(
            result(
                RDMA_STATE,
                "pass" if ok else "fail",
                component=comp,
                measured={"state": state, "phys_state": phys},
                expected={"state": "ACTIVE", "phys_state": "LinkUp"},
                reason=None if ok else f"{comp} is {state}/{phys}, expected ACTIVE/LinkUp",
                source=_SYSFS_IB,
                lines=[_port_line(p)],
            )
        )
    return out


RDMA_RATE = CheckSpec(
    "rdma.ports.rate",
    "RDMA port rate",
    "quick",
    "link rate of each RDMA port, Gb/s",
    "at least gpurack_expect.rdma.rate_gbps",
    f"{EXPECT}.rdma.rate_gbps",
    "check cable type and switch port speed; reseat the transceiver",
    expects=(ExpectKey("rdma.rate_gbps", "number", "Minimum rate of each port, in Gb/s."), RDMA_LINK_LAYER),
)


@check(RDMA_RATE)
def check_rdma_rate(ctx: Context) -> list[CheckResult]:
    ports, why = ctx.ports()
    if why:
        return [skip(RDMA_RATE, why)]
    expected = ctx.want("rdma.rate_gbps")
    if expected is None:
        return [not_expected(RDMA_RATE, "rdma.rate_gbps")]
    ports = ctx.compute_ports(ports)
    if not ports:
        return [skip(RDMA_RATE, "no RDMA ports")]
    out = []
    for p in ports:
        comp, rate = p.component(), p.field("rate_gbps")
        ok = isinstance(rate, (int, float)) and rate >= expected
        out.append(
            result(
                RDMA_RATE,
                "pass" if ok else "fail",
                component=comp,
                measured=rate,
                expected=expected,
                unit="Gb/s",
                reason=None if ok else f"{comp} runs at {rate} Gb/s, expected {expected} Gb/s",
                source=_SYSFS_IB,
                lines=[_port_line(p)],
            )
        )
    return out


RDMA_LAYER = CheckSpec(
    "rdma.ports.link_layer",
    "RDMA link layer",
    "quick",
    "link layer of the RDMA ports (InfiniBand or Ethernet for RoCE)",
    "gpurack_expect.rdma.ports ports (or at least one) with gpurack_expect.rdma.link_layer",
    f"{EXPECT}.rdma.link_layer",
    "set the port type with mlxconfig (LINK_TYPE_P1=1 for IB, 2 for Ethernet) and reboot",
    expects=(RDMA_LINK_LAYER, RDMA_PORTS),
)


@check(RDMA_LAYER)
def check_rdma_link_layer(ctx: Context) -> list[CheckResult]:
    ports, why = ctx.ports()
    if why:
        return [skip(RDMA_LAYER, why)]
    layer = ctx.want("rdma.link_layer")
    if layer is None:
        return [not_expected(RDMA_LAYER, "rdma.link_layer")]
    counts: dict[str, int] = {}
    for p in ports:
        counts[str(p.field("link_layer"))] = counts.get(str(p.field("link_layer")), 0) + 1
    need = ctx.want("rdma.ports") or 1
    have = counts.get(layer, 0)
    ok = have >= need
    return [
        result(
            RDMA_LAYER,
            "pass" if ok else "fail",
            measured=counts,
            expected={layer: need},
            unit="ports",
            reason=None if ok else f"{have} RDMA ports use {layer}, expected {need}",
            source=_SYSFS_IB,
            lines=[_port_line(p) for p in ports],
        )
    ]


# --- measured (gpurack.gpubench measures it) ---------------------------------------------------

ALLREDUCE_BUSBW = measured(
    "gpu.allreduce_busbw",
    "All-reduce bus bandwidth",
    "standard",
    "NCCL all-reduce bus bandwidth across the node's GPUs, GB/s",
    share_of="NVLinks per GPU x per-link GB/s on NVLink systems, else the PCIe ceiling",
    remediation="check NVLink state, fabric manager and NCCL topology (NCCL_DEBUG=INFO)",
    model_field="nvlink_gbps_per_gpu",
    ratios=(0.70, WARN_FLOOR),
    threshold_source="NCCL's ring/tree all-reduce reaches 75-85 % of the per-GPU link rate at GiB "
    "sizes (4 H200s over NVLink gave 359 of 450 GB/s bus bandwidth at 2 GiB): pass >= 70 %, "
    "warn >= 60 %, fail below",
    module=__name__,
)
