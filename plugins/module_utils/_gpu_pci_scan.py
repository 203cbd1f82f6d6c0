# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""NVIDIA GPUs on the PCI bus (sysfs), for nodes where nvidia-smi is absent or lists none.

Stdlib only.
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_values import known
from ansible_collections.gpurack.bootstrap.plugins.module_utils._source import Source

NVIDIA_VENDOR_ID = "0x10de"
# PCI base class 03 (display): 0x0300 VGA controller, 0x0302 3D controller (datacenter GPUs).
GPU_CLASS_PREFIXES = ("0x0300", "0x0302")

PCI_DEVICES = "sys/bus/pci/devices"


# PCIe transfer rate per lane (sysfs `*_link_speed`, GT/s) -> generation.
_GT_S_TO_GEN = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}


# ---------------------------------------------------------------------------------------
# PCI scan (no driver)


def pcie_gen(link_speed: str | None) -> int | None:
    """sysfs '32.0 GT/s PCIe' (or older '8 GT/s') -> 5; 'Unknown' or absent -> None."""
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*GT/s", link_speed or "")
    return _GT_S_TO_GEN.get(float(match.group(1))) if match else None


def sysfs_int(text: str | None) -> int | None:
    value = (text or "").strip()
    # More digits than any attribute has is no number (and beyond int()'s 4300-digit limit).
    return int(value) if re.fullmatch(r"\d{1,20}", value) else None


def numa_node(source: Source, bus_id: str) -> int | None:
    # sysfs says -1 when the platform reports no NUMA locality (VMs, single-socket boards).
    return sysfs_int(source.read(f"{PCI_DEVICES}/{bus_id}/numa_node"))


def scan_pci_gpus(source: Source) -> list[dict[str, Any]]:
    """NVIDIA display/3D controllers under sys/bus/pci/devices, in bus order, schema-shaped."""
    gpus: list[dict[str, Any]] = []
    for bus_id in source.listdir(PCI_DEVICES):
        base = f"{PCI_DEVICES}/{bus_id}"
        vendor = (source.read(f"{base}/vendor") or "").strip().lower()
        pci_class = (source.read(f"{base}/class") or "").strip().lower()
        if vendor != NVIDIA_VENDOR_ID or not pci_class.startswith(GPU_CLASS_PREFIXES):
            continue
        device = (source.read(f"{base}/device") or "").strip().lower() or None
        gpus.append(
            {
                "index": len(gpus),
                "name": f"NVIDIA {device}" if device else "NVIDIA GPU",
                "architecture": None,
                "uuid": None,
                "serial": None,
                "bus_id": bus_id.lower(),
                "pci_device_id": device,
                "vbios": None,
                "memory_total_mib": None,
                "pcie": {
                    "gen_current": pcie_gen(source.read(f"{base}/current_link_speed")),
                    "gen_max": pcie_gen(source.read(f"{base}/max_link_speed")),
                    "width_current": sysfs_int(source.read(f"{base}/current_link_width")),
                    "width_max": sysfs_int(source.read(f"{base}/max_link_width")),
                },
                "pcie_replays": None,
                "persistence_mode": None,
                "mig_mode": None,
                "ecc_mode": None,
                "ecc_errors": None,
                "remapped_rows": None,
                "retired_pages": None,
                "recovery_action": None,
                "clocks_event_reasons": None,
                "nvlinks": None,
                "nvlink_source": None,
                "numa_node": numa_node(source, bus_id),
                "cpu_affinity": known(source.read(f"{base}/local_cpulist")),
            }
        )
    return gpus
