# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Typed views over the PCI facts (gather_pci's result), for the checks."""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.view import FactView

# PCI class codes (the CCSS part of class_id) and lspci's names for them.
_GPU_CLASSES = {"0x0300": "VGA compatible controller", "0x0302": "3D controller"}
_NVME_CLASS = ("0x0108", "Non-Volatile memory controller")
_RDMA_CLASS = ("0x0207", "Infiniband controller")
_NETWORK_CLASS = ("0x0200", "Ethernet controller")
_NVIDIA, _MELLANOX = "0x10de", "0x15b3"


class PciDeviceView(FactView):
    """One `gpurack_pci.devices[]` entry."""

    FIELDS = frozenset(
        {
            "bus_id",
            "description",
            "vendor_id",
            "device_id",
            "class_id",
            "numa_node",
            "link",
            "link.cap_speed_gts",
            "link.cap_width",
            "link.sta_speed_gts",
            "link.sta_width",
            "link.speed_downgraded",
            "link.width_downgraded",
            "upstream",
        }
    )

    def _is(self, class_id: str, name: str) -> bool:
        return self.field("class_id") == class_id or str(self.field("description") or "").startswith(name)

    def is_nvidia_gpu(self) -> bool:
        """An NVIDIA display or 3D controller (by ids, else by lspci's description)."""
        vendor = str(self.field("vendor_id") or "").lower()
        text = str(self.field("description") or "")
        by_class = any(self._is(cid, name) for cid, name in _GPU_CLASSES.items())
        return by_class and (vendor == _NVIDIA or (not vendor and "NVIDIA" in text))

    def is_nvme(self) -> bool:
        """An NVMe controller."""
        return self._is(*_NVME_CLASS)

    def is_rdma(self) -> bool:
        """An InfiniBand HCA, or a Mellanox/NVIDIA ConnectX Ethernet NIC (RoCE)."""
        if self._is(*_RDMA_CLASS):
            return True
        vendor = str(self.field("vendor_id") or "").lower()
        text = str(self.field("description") or "")
        return self._is(*_NETWORK_CLASS) and (vendor == _MELLANOX or "Mellanox" in text)


class PciFactsView(FactView):
    """`gpurack_pci` as `gather_pci` returns it."""

    FACT = "gpurack_pci"
    FIELDS = frozenset({"available", "reason", "source", "sources", "devices", "downgraded"})

    def devices(self) -> list[PciDeviceView]:
        """Every device."""
        return self.items("devices", PciDeviceView)

    def upstream_chain(self, bus_id: str) -> list[str]:
        """The bridges from `bus_id` up to its root port, nearest first (from lspci's bus numbers)."""
        parents = {str(d.field("bus_id")): d.field("upstream") for d in self.devices()}
        chain: list[str] = []
        up = parents.get(bus_id)
        while isinstance(up, str) and up not in chain:
            chain.append(up)
            up = parents.get(up)
        return chain
