# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What every quick check reads: the facts through the parsers' views, and the expectations."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.expect import get
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.registry import CheckSpec, skip
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_views import GpuFactsView, GpuView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nic import NicFactsView, RdmaPortView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.numa import NumaFactsView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nvme import NvmeFactsView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.os import OsFactsView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci_views import (
    PciFactsView,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult

_GPU_SOURCES = {
    "nvidia-smi-xml": "nvidia-smi -q -x",
    "nvidia-smi-text": "nvidia-smi -q",
    "pci-scan": "sysfs /sys/bus/pci/devices",
}


def _usable(view: Any) -> bool:
    return view is not None and view.field("available") is not False


@dataclass(frozen=True)
class Context:
    """The facts of one node (read only through the views), its validated expectations and
    its pool's settings (`gpurack_pool`: name, workload, sharing; {} when not given)."""

    facts: Mapping[str, Any]
    expect: Mapping[str, Any]
    pool: Mapping[str, Any] = dataclass_field(default_factory=dict)

    def want(self, dotted: str) -> Any:
        return get(self.expect, dotted)

    def pool_setting(self, name: str) -> str | None:
        """One `gpurack_pool` setting as a string (e.g. sharing), None when the pool lacks it."""
        value = self.pool.get(name) if isinstance(self.pool, Mapping) else None
        return value if isinstance(value, str) and value else None

    def gpu(self) -> GpuFactsView | None:
        return GpuFactsView.of(self.facts)

    def pci(self) -> PciFactsView | None:
        view = PciFactsView.of(self.facts)
        return view if _usable(view) else None

    def numa(self) -> NumaFactsView | None:
        return NumaFactsView.of(self.facts)

    def nic(self) -> NicFactsView | None:
        return NicFactsView.of(self.facts)

    def nvme(self) -> NvmeFactsView | None:
        return NvmeFactsView.of(self.facts)

    def os(self) -> OsFactsView | None:
        return OsFactsView.of(self.facts)

    def gpus(self) -> tuple[list[GpuView], str | None]:
        """The GPU list, or ([], why there is none to check)."""
        gpu = self.gpu()
        if gpu is None:
            return [], "no GPU facts were gathered (gpurack_gpu missing)"
        if gpu.field("available") is False:
            return [], f"GPU facts unavailable: {gpu.field('reason') or 'no reason given'}"
        gpus = gpu.gpus()
        return gpus, (None if gpus else "no GPUs found")

    def gpu_source(self) -> str:
        gpu = self.gpu()
        source = gpu.field("source") if gpu is not None else None
        return _GPU_SOURCES.get(str(source), str(source or "gpu facts"))

    def ports(self) -> tuple[list[RdmaPortView], str | None]:
        """The RDMA ports, or ([], why there are none to check)."""
        nic = self.nic()
        if nic is None:
            return [], "no NIC facts were gathered (gpurack_nic missing)"
        if nic.field("available") is False:
            return [], f"NIC facts unavailable: {nic.field('reason') or 'no reason given'}"
        return nic.rdma(), None

    def compute_ports(self, ports: list[RdmaPortView]) -> list[RdmaPortView]:
        """The ports of the expected link layer (all when none is expected)."""
        layer = self.want("rdma.link_layer")
        return [p for p in ports if layer is None or p.field("link_layer") == layer]


def not_expected(entry: CheckSpec, dotted: str, measured: Any = None) -> CheckResult:
    """The skip of a check whose expectation the pool does not set."""
    return skip(entry, f"not checked: gpurack_expect.{dotted} is not set", measured=measured)


def per_gpu(
    ctx: Context,
    entry: CheckSpec,
    value_of: Callable[[GpuView], Any],
    judge: Callable[[GpuView, Any], CheckResult],
    missing: str,
) -> list[CheckResult]:
    """Judge each GPU's value; skip GPUs (or the node, when all) whose value is unknown."""
    gpus, why = ctx.gpus()
    if why:
        return [skip(entry, why)]
    values = [(g, value_of(g)) for g in gpus]
    if all(v is None for _name, v in values):
        return [skip(entry, missing)]
    return [
        judge(g, v) if v is not None else skip(entry, missing, component=g.component()) for g, v in values
    ]


def field(path: str) -> Callable[[GpuView], Any]:
    """A `value_of` for per_gpu: one declared field of each GPU."""
    return lambda gpu: gpu.field(path)


def numa_node(value: Any) -> int | None:
    """A NUMA node id; sysfs numa_node is -1 on machines without NUMA information."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
