"""`gpurack facts` as tables: OS line, GPUs, NICs, disks, labels."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table
from rich.text import Text

from gpurack.render.console import stdout_console
from gpurack.render.text import note_unavailable, table, text


def facts_tables(host: str, facts: Mapping[str, Mapping[str, Any]], labels: Mapping[str, str]) -> None:
    """Human view of a node's facts: OS line, GPUs, NICs, disks, labels."""
    console = stdout_console()
    os_facts = facts.get("gpurack_os", {})
    distribution = (os_facts.get("distribution") or {}).get("pretty_name")
    kernel = text(os_facts.get("kernel"))
    console.print(Text.assemble((host, "bold"), f"  {text(distribution)}  kernel {kernel}"))
    console.print(_gpu_table(facts.get("gpurack_gpu", {})))
    console.print(_nic_table(facts.get("gpurack_nic", {})))
    console.print(_disk_table(facts.get("gpurack_nvme", {})))
    console.print(_pairs_table("labels", labels))


def _gpu_table(gpu: Mapping[str, Any]) -> Table:
    """GPUs: index, model, memory, PCIe link, bus id, NUMA node."""
    title = f"GPUs (driver {text(gpu.get('driver_version'))}, CUDA {text(gpu.get('cuda_version'))})"
    out = table(title, "#", "model", "memory MiB", "PCIe", "bus id", "NUMA")
    for card in gpu.get("gpus") or []:
        out.add_row(
            text(card.get("index")),
            text(card.get("name")),
            text(card.get("memory_total_mib")),
            _pcie(card.get("pcie") or {}),
            text(card.get("bus_id")),
            text(card.get("numa_node")),
        )
    note_unavailable(out, gpu)
    return out


def _nic_table(nic: Mapping[str, Any]) -> Table:
    """Network interfaces and RDMA ports in one table."""
    out = table("NICs", "name", "kind", "state", "speed", "MTU / link layer")
    for port in nic.get("rdma") or []:
        out.add_row(
            f"{text(port.get('device'))}/{text(port.get('port'))}",
            "rdma",
            text(port.get("state")),
            f"{text(port.get('rate_gbps'))} Gb/s",
            text(port.get("link_layer")),
        )
    for net in nic.get("net") or []:
        speed = net.get("speed_mbps")
        out.add_row(
            text(net.get("name")),
            "net",
            text(net.get("operstate")),
            "-" if speed is None else f"{speed} Mb/s",
            text(net.get("mtu")),
        )
    note_unavailable(out, nic)
    return out


def _disk_table(nvme: Mapping[str, Any]) -> Table:
    """NVMe disks: name, model, serial, size, whether the OS lives there."""
    out = table("NVMe disks", "name", "model", "serial", "size GB", "OS disk")
    for disk in nvme.get("disks") or []:
        size = disk.get("size_bytes")
        out.add_row(
            text(disk.get("name")),
            text(disk.get("model")),
            text(disk.get("serial")),
            "-" if size is None else f"{size / 1e9:.0f}",
            text(disk.get("is_os_disk")),
        )
    note_unavailable(out, nvme)
    return out


def _pairs_table(title: str, pairs: Mapping[str, Any]) -> Table:
    """A two-column key/value table."""
    out = table(title, "key", "value")
    for key, value in pairs.items():
        out.add_row(key, text(value))
    return out


def _pcie(pcie: Mapping[str, Any]) -> str:
    """`Gen5 x16` (with the maximum when the link runs below it)."""
    now = f"Gen{text(pcie.get('gen_current'))} x{text(pcie.get('width_current'))}"
    top = f"Gen{text(pcie.get('gen_max'))} x{text(pcie.get('width_max'))}"
    return now if top in (now, "Gen- x-") else f"{now} (max {top})"
