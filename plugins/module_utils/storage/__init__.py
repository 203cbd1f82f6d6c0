# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Scratch storage (roles/nvme_scratch): the plan of a node's NVMe scratch array, with the disks
the operating system uses left out (`scratch`). Stdlib only.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.storage.scratch import (
    BlockSystem,
    PlanOptions,
    plan,
    probe,
)

__all__ = [
    "BlockSystem",
    "PlanOptions",
    "plan",
    "probe",
]
