"""The comparable part of a host's snapshot: frozen states reduced from its facts and results.

`state_from_facts` reduces a node's facts and check results to the parts `gpurack.drift`
compares (the same rows the inventory database stores).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpurack import coerce


@dataclass(frozen=True, slots=True)
class GpuState:
    index: int | None
    bus_id: str | None
    uuid: str | None
    serial: str | None
    name: str | None
    vbios: str | None
    memory_mib: int | None
    pcie_gen_current: int | None
    pcie_gen_max: int | None
    pcie_width_current: int | None
    pcie_width_max: int | None


@dataclass(frozen=True, slots=True)
class NicState:
    device: str
    port: int | None
    guid: str | None
    fw: str | None
    rate_gbps: float | None
    state: str | None
    phys_state: str | None
    link_layer: str | None


@dataclass(frozen=True, slots=True)
class DiskState:
    name: str
    serial: str | None
    model: str | None
    firmware: str | None
    size_bytes: int | None


@dataclass(frozen=True, slots=True)
class CheckState:
    check_id: str
    component: str | None
    verdict: str
    reason: str | None


@dataclass(frozen=True, slots=True)
class HostState:
    """The comparable part of one snapshot of one host."""

    kernel: str | None
    driver: str | None
    cuda: str | None
    gpus: tuple[GpuState, ...]
    nics: tuple[NicState, ...]
    disks: tuple[DiskState, ...]
    checks: tuple[CheckState, ...]
    labels: tuple[tuple[str, str], ...]


# ---------------------------------------------------------------------------------------------
# facts -> state


def _str(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return text or None


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def gpus_from_facts(gpu_facts: Mapping[str, Any]) -> tuple[GpuState, ...]:
    """GPU rows of a `gpurack_gpu` fact (docs/facts.md), in index order."""
    rows = []
    for gpu in coerce.mappings(gpu_facts.get("gpus")):
        pcie = coerce.mapping(gpu.get("pcie"))
        rows.append(
            GpuState(
                index=_int(gpu.get("index")),
                bus_id=_str(gpu.get("bus_id")),
                uuid=_str(gpu.get("uuid")),
                serial=_str(gpu.get("serial")),
                name=_str(gpu.get("name")),
                vbios=_str(gpu.get("vbios")),
                memory_mib=_int(gpu.get("memory_total_mib")),
                pcie_gen_current=_int(pcie.get("gen_current")),
                pcie_gen_max=_int(pcie.get("gen_max")),
                pcie_width_current=_int(pcie.get("width_current")),
                pcie_width_max=_int(pcie.get("width_max")),
            )
        )
    return tuple(sorted(rows, key=lambda g: (g.index is None, g.index or 0, g.bus_id or "")))


def nics_from_facts(nic_facts: Mapping[str, Any]) -> tuple[NicState, ...]:
    """RDMA port rows of a `gpurack_nic` fact."""
    rows = []
    for port in coerce.mappings(nic_facts.get("rdma")):
        device = _str(port.get("device"))
        if device is None:
            continue
        rows.append(
            NicState(
                device=device,
                port=_int(port.get("port")),
                guid=_str(port.get("port_guid")) or _str(port.get("node_guid")),
                fw=_str(port.get("fw_ver")),
                rate_gbps=_float(port.get("rate_gbps")),
                state=_str(port.get("state")),
                phys_state=_str(port.get("phys_state")),
                link_layer=_str(port.get("link_layer")),
            )
        )
    return tuple(sorted(rows, key=lambda n: (n.device, n.port or 0)))


def disks_from_facts(nvme_facts: Mapping[str, Any]) -> tuple[DiskState, ...]:
    """NVMe rows of a `gpurack_nvme` fact."""
    rows = []
    for disk in coerce.mappings(nvme_facts.get("disks")):
        name = _str(disk.get("name"))
        if name is None:
            continue
        rows.append(
            DiskState(
                name=name,
                serial=_str(disk.get("serial")),
                model=_str(disk.get("model")),
                firmware=_str(disk.get("firmware")),
                size_bytes=_int(disk.get("size_bytes")),
            )
        )
    return tuple(sorted(rows, key=lambda d: d.name))


def checks_from_results(results: Iterable[Mapping[str, Any]]) -> tuple[CheckState, ...]:
    """Verdicts of check result dicts, one per (check id, component)."""
    rows = {}
    for result in results:
        check_id = _str(result.get("id"))
        verdict = _str(result.get("verdict"))
        if check_id is None or verdict is None:
            continue
        component = _str(result.get("component"))
        rows[(check_id, component or "")] = CheckState(
            check_id, component, verdict, _str(result.get("reason"))
        )
    return tuple(rows[key] for key in sorted(rows))


def state_from_facts(
    facts: Mapping[str, Any],
    results: Iterable[Mapping[str, Any]] = (),
    labels: Mapping[str, Any] | None = None,
) -> HostState:
    """Reduce a node's facts (`gpurack_*` keys), check results and labels to a `HostState`."""
    gpu = coerce.mapping(facts.get("gpurack_gpu"))
    os_facts = coerce.mapping(facts.get("gpurack_os"))
    return HostState(
        kernel=_str(os_facts.get("kernel")),
        driver=_str(gpu.get("driver_version")),
        cuda=_str(gpu.get("cuda_version")),
        gpus=gpus_from_facts(gpu),
        nics=nics_from_facts(coerce.mapping(facts.get("gpurack_nic"))),
        disks=disks_from_facts(coerce.mapping(facts.get("gpurack_nvme"))),
        checks=checks_from_results(results),
        labels=tuple(sorted((str(k), str(v)) for k, v in (labels or {}).items())),
    )
