"""A drift item: its kind and the one sentence operators read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

DriftKind = Literal[
    "gpu_swapped",
    "gpu_missing",
    "gpu_added",
    "gpu_moved",
    "pcie_downgraded",
    "pcie_upgraded",
    "vbios_changed",
    "nic_missing",
    "nic_added",
    "nic_replaced",
    "nic_state_changed",
    "nic_rate_changed",
    "nic_link_layer_changed",
    "nic_firmware_changed",
    "disk_replaced",
    "disk_missing",
    "disk_added",
    "disk_firmware_changed",
    "driver_changed",
    "cuda_changed",
    "kernel_changed",
    "label_changed",
    "verdict_changed",
    "link_moved",
    "link_lost",
    "link_found",
    "leaves_changed",
]


@dataclass(frozen=True, slots=True)
class Drift:
    """One change between two snapshots; `sentence` is what operators read."""

    kind: DriftKind
    component: str
    before: str | None
    after: str | None
    sentence: str
