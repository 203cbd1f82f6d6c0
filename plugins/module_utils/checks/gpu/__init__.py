# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""GPU checks: one component in three modules, registered in this order: `inventory` (count,
PCI visibility, model, memory), `health` (Xid events, persistence, MIG, recovery action,
clocks) and `measured` (the specs of what gpurack.gpubench measures on the GPU)."""

from __future__ import annotations

# Importing registers the checks; the order here is the order they run and are documented in.
# isort: off
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.gpu import (  # noqa: F401 - registers
    inventory,
    health,
    measured,
)
# isort: on
