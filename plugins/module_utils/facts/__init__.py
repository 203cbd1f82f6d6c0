# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""A node's hardware and OS facts, as the *_facts modules, `gpurack facts` and `gpurack capture` gather them.

Where they come from: a live host or a capture folder (`source`), the capture's command list and
file format (`capture`, `capture_reader`), the bundle that `capture_bundle` and `gpurack capture`
write (`bundle`, with the sysfs mirror of `sysfs`). One parser module per device class (`gpu`,
`pci`, `numa`, `nic`, `nvme`, `os`; `node` gathers them all), read-only views over what they
return (`view`, `gpu_views`), and the GPU model table (`gpu_models`, `gpu_model_type`).
Stdlib only: it ships to nodes with the modules.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.bundle import (
    BundleStats,
    Step,
    step_count,
    write_bundle,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    CAPTURE_COMMANDS,
    RC_NOT_FOUND,
    CapturedCommand,
    CaptureFormatError,
    CommandOutput,
    command_line,
    format_capture_file,
    not_found,
    parse_capture_file,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture_reader import CaptureReader
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu import gather_gpu
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_model_type import (
    PCIE_RATES,
    PCIE_SOURCE,
    GpuModel,
    pcie_ceiling_gbps,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_models import find_model
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_views import GpuFactsView, GpuView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nic import NicFactsView, gather_nic
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.node import GATHERERS, gather_all
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.numa import gather_numa
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nvme import gather_nvme
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.os import (
    OsFactsView,
    XidEventView,
    gather_os,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci import (
    gather_pci,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci_views import (
    PciFactsView,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.runner import make_runner, warn_about
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import (
    CaptureError,
    CaptureSource,
    LiveSource,
    Source,
    is_capture_dir,
    open_source,
    source_warnings,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.sysfs import FolderSink, TarSink
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.view import count

__all__ = [
    "CAPTURE_COMMANDS",
    "GATHERERS",
    "PCIE_RATES",
    "PCIE_SOURCE",
    "RC_NOT_FOUND",
    "BundleStats",
    "CaptureError",
    "CaptureFormatError",
    "CaptureReader",
    "CaptureSource",
    "CapturedCommand",
    "CommandOutput",
    "FolderSink",
    "GpuFactsView",
    "GpuModel",
    "GpuView",
    "LiveSource",
    "NicFactsView",
    "OsFactsView",
    "PciFactsView",
    "Source",
    "Step",
    "TarSink",
    "XidEventView",
    "command_line",
    "count",
    "find_model",
    "format_capture_file",
    "gather_all",
    "gather_gpu",
    "gather_nic",
    "gather_numa",
    "gather_nvme",
    "gather_os",
    "gather_pci",
    "is_capture_dir",
    "make_runner",
    "not_found",
    "open_source",
    "parse_capture_file",
    "pcie_ceiling_gbps",
    "source_warnings",
    "step_count",
    "warn_about",
    "write_bundle",
]
