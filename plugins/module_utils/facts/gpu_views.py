# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The views of `gpurack_gpu` (docs/facts.md) for consumers: checks and the measured tiers.

Stdlib only. The fields are what `_gpu_facts.gather_gpu` produces (a test keeps them equal).
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.view import FactView

# ---------------------------------------------------------------------------------------
# views: what the functions above produce, for consumers (checks, measured tiers)


class NvLinkView(FactView):
    """One `gpus[].nvlinks[]` entry."""

    FIELDS = frozenset({"link", "speed_gbps", "active"})


class GpuView(FactView):
    """One `gpurack_gpu.gpus[]` entry."""

    FIELDS = frozenset(
        {
            "index",
            "name",
            "architecture",
            "uuid",
            "serial",
            "bus_id",
            "pci_device_id",
            "vbios",
            "memory_total_mib",
            "pcie",
            "pcie.gen_current",
            "pcie.gen_max",
            "pcie.gen_max_device",
            "pcie.gen_max_host",
            "pcie.width_current",
            "pcie.width_max",
            "pcie_replays.since_reset",
            "pcie_replays.rollovers",
            "persistence_mode",
            "mig_mode",
            "mig_mode_pending",
            "ecc_mode",
            "ecc_errors",
            "ecc_errors.volatile_corrected",
            "ecc_errors.volatile_uncorrected",
            "ecc_errors.aggregate_corrected",
            "ecc_errors.aggregate_uncorrected",
            "remapped_rows.correctable",
            "remapped_rows.uncorrectable",
            "remapped_rows.pending",
            "remapped_rows.failure",
            "retired_pages.single_bit",
            "retired_pages.double_bit",
            "retired_pages.pending",
            "recovery_action",
            "clocks_event_reasons",
            "nvlinks",
            "nvlink_source",
            "numa_node",
            "cpu_affinity",
        }
    )

    def component(self) -> str:
        """`GPU 3 (0000:19:00.0)`, the component name of every GPU result."""
        bus = self.field("bus_id")
        return f"GPU {self.field('index')} ({bus})" if bus else f"GPU {self.field('index')}"

    def nvlinks(self) -> list[NvLinkView]:
        """The GPU's NVLinks (empty when nvidia-smi nvlink -s gave none)."""
        return self.items("nvlinks", NvLinkView)


class GpuFactsView(FactView):
    """`gpurack_gpu` as `gather_gpu` returns it."""

    FACT = "gpurack_gpu"
    FIELDS = frozenset(
        {
            "available",
            "reason",
            "source",
            "sources",
            "driver_version",
            "cuda_version",
            "driver_loaded",
            "count",
            "nvidia_smi_count",
            "gpus",
            "topology",
            "topology.links",
            "nvswitch",
        }
    )

    def gpus(self) -> list[GpuView]:
        """Every GPU entry."""
        return self.items("gpus", GpuView)
