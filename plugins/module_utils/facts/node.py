# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Every fact of one node from one Source: the single list of gatherers (stdlib only)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu import gather_gpu
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nic import gather_nic
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.numa import gather_numa
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nvme import gather_nvme
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.os import gather_os
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci import gather_pci
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import Source

Gatherer = Callable[[Source], dict[str, Any]]

# Fact name -> gatherer, in the order docs/facts.md lists them.
GATHERERS: tuple[tuple[str, Gatherer], ...] = (
    ("gpurack_gpu", gather_gpu),
    ("gpurack_pci", gather_pci),
    ("gpurack_numa", gather_numa),
    ("gpurack_nic", gather_nic),
    ("gpurack_nvme", gather_nvme),
    ("gpurack_os", gather_os),
)


def gather_all(source: Source) -> dict[str, dict[str, Any]]:
    """Return every `gpurack_<thing>` fact of the node behind `source`.

    Raises:
        FactsError: a tool's output is malformed or truncated.
        CaptureError: a capture file lost its frame (truncated bundle).
    """
    return {name: gather(source) for name, gather in GATHERERS}
