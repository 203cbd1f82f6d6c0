# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What the GPU model table holds per model (`GpuModel`), and the PCIe rates its limits use.

Stdlib only: ships to every node with the modules that import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

FormFactor = Literal["sxm", "pcie", "nvl", "superchip", "unknown"]

# Raw signalling rate per lane (GT/s) and the share of it that carries data, by PCIe generation:
# 8b/10b up to Gen2, 128b/130b for Gen3-5 (PCI-SIG base specifications 1.1 to 5.0), and for
# Gen6 the 242 of 256 FLIT bytes that are not FEC or CRC (PCIe 6.0 base specification).
PCIE_RATES: dict[int, tuple[float, float]] = {
    1: (2.5, 8 / 10),
    2: (5.0, 8 / 10),
    3: (8.0, 128 / 130),
    4: (16.0, 128 / 130),
    5: (32.0, 128 / 130),
    6: (64.0, 242 / 256),
}
PCIE_SOURCE = "PCIe base specification: GT/s per lane x lanes x 128/130 line code / 8 bits, one direction"


@dataclass(frozen=True)
class GpuModel:
    """One GPU model: how to recognise it and what it should deliver.

    `nvlinks_per_gpu` counts links every installed GPU has (0 for PCIe cards even when an
    optional NVLink bridge exists; `nvlinks_bridged` says how many a bridged card shows).
    `nvlink_gbps_per_link` is GB/s per link and direction by the datasheet (nvidia-smi
    nvlink -s prints the signalling rate, 26.562 GB/s for NVLink4). Unknown limits are None.
    """

    slug: str
    names: tuple[str, ...]
    pci_device_ids: tuple[str, ...]
    family: str
    form_factor: FormFactor
    memory_gb: int | None
    min_memory_mib: int | None
    pcie_gen: int | None
    pcie_width: int | None
    nvlinks_per_gpu: int | None
    nvlinks_bridged: int | None
    nvlink_gbps_per_link: float | None
    hbm_tbps: float | None
    bf16_dense_tflops: float | None
    ecc_expected: bool
    provenance: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """The label value (`gpurack.io/accelerator`); same as `slug`."""
        return self.slug

    @property
    def known(self) -> bool:
        """True for table entries, False for the fallback built from a name."""
        return bool(self.names or self.pci_device_ids)

    @property
    def pcie_h2d_gbps(self) -> float | None:
        """Ceiling of a host-to-device copy over the model's PCIe link, GB/s (None without a link)."""
        gen, width = self.pcie_gen, self.pcie_width
        if gen is None or width is None or gen not in PCIE_RATES or width <= 0:
            return None
        return round(pcie_ceiling_gbps(gen, width), 3)

    @property
    def nvlink_gbps_per_gpu(self) -> float | None:
        """Datasheet NVLink bandwidth per GPU and direction, GB/s (None without NVLink)."""
        if not self.nvlinks_per_gpu or self.nvlink_gbps_per_link is None:
            return None
        return self.nvlinks_per_gpu * self.nvlink_gbps_per_link

    def source_of(self, limit: str) -> str:
        """Where a limit comes from (datasheet, measurement), or 'not in the model table'."""
        return self.provenance.get(limit, "not in the model table")


def pcie_ceiling_gbps(gen: int, width: int) -> float:
    """Raw one-direction PCIe data rate in GB/s (10^9 bytes): Gen5 x16 is 32 x 16 x 128/130 / 8 = 63.015.

    The ceiling a host-to-device copy can approach, not reach.

    Raises:
        ValueError: the generation is not in PCIE_RATES or the width is not positive.
    """
    if gen not in PCIE_RATES:
        raise ValueError(f"unknown PCIe generation {gen!r} (known: {sorted(PCIE_RATES)})")
    if width <= 0:
        raise ValueError(f"PCIe link width must be positive, got {width!r}")
    gts, efficiency = PCIE_RATES[gen]
    return gts * width * efficiency / 8
