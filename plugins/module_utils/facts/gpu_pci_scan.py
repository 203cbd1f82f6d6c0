# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""NVIDIA GPUs on the PCI bus (sysfs), for nodes where nvidia-smi is absent or lists none.

Stdlib only.
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import plausible
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_values import known
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import Source

NVIDIA_VENDOR_ID = "0x10de"
# PCI base class 03 (display): 0x0300 VGA controller, 0x0302 3D controller (datacenter GPUs).
GPU_CLASS_PREFIXES = ("0x0300", "0x0302")

PCI_DEVICES = "sys/bus/pci/devices"


# PCIe transfer rate per lane (sysfs `*_link_speed`, GT/s) -> generation.
_GT_S_TO_GEN = {gts: gen for gen, gts in plausible.PCIE_GEN_GTS.items()}


# ---------------------------------------------------------------------------------------
# PCI scan (no driver)


def pcie_gen(link_speed: str | None, where: str = "sysfs link speed") -> int | None:
    """sysfs '32.0 GT/s PCIe' (or older '8 GT/s') -> 5; 'Unknown' or absent -> None.

    Raises:
        FactsError: a rate no PCIe generation has ('40 GT/s').
    """
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*GT/s", link_speed or "")
    if match is None:
        return None
    gts = plausible.link_speed(float(match.group(1)), where, "link speed")
    return _GT_S_TO_GEN[gts] if gts is not None else None


def sysfs_int(text: str | None) -> int | None:
    value = (text or "").strip()
    # More digits than any attribute has is no number (and beyond int()'s 4300-digit limit).
    return int(value) if re.fullmatch(r"\d{1,20}", value) else None


def _lanes(text: str | None) -> int | None:
    """A sysfs link width: an integer (a negative one is refused by the caller), else None."""
    value = (text or "").strip()
    return int(value) if re.fullmatch(r"-?\d+", value) else None


def numa_node(source: Source, bus_id: str) -> int | None:
    # sysfs says -1 when the platform reports no NUMA locality (VMs, single-socket boards).
    return sysfs_int(source.read(f"{PCI_DEVICES}/{bus_id}/numa_node"))


def _scan_link(source: Source, base: str) -> dict[str, int | None]:
    """A GPU's PCIe link from sysfs (no host/device split there).

    Raises:
        FactsError: a width no link has, or a current value above the maximum.
    """
    where = f"sysfs {base}"
    link: dict[str, int | None] = {
        "gen_current": pcie_gen(source.read(f"{base}/current_link_speed"), f"{where}/current_link_speed"),
        "gen_max": pcie_gen(source.read(f"{base}/max_link_speed"), f"{where}/max_link_speed"),
        "gen_max_device": None,
        "gen_max_host": None,
        "width_current": plausible.link_width(
            _lanes(source.read(f"{base}/current_link_width")),
            where,
            "current_link_width",
            link_down_ok=True,
        ),
        "width_max": plausible.link_width(
            _lanes(source.read(f"{base}/max_link_width")), where, "max_link_width"
        ),
    }
    plausible.not_above(link["gen_current"], link["gen_max"], where, "current PCIe generation")
    plausible.not_above(link["width_current"], link["width_max"], where, "current link width")
    return link


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
        pcie = _scan_link(source, base)
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
                "pcie": pcie,
                "pcie_replays": None,
                "persistence_mode": None,
                "mig_mode": None,
                "mig_mode_pending": None,
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
