# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The cost per accepted unit (docs/cost.md): prices, the window and allocation (`model`), and
where they come from in the inventory (`inputs`). Stdlib only.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.inputs import (
    SITE_VARIABLE,
    pools_from_hosts,
    site_costs,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.model import (
    OUTCOMES,
    Allocation,
    Baseline,
    BaselineComparison,
    Cost,
    CostError,
    Outcome,
    Prices,
    Window,
    against,
    cost,
)

__all__ = [
    "OUTCOMES",
    "SITE_VARIABLE",
    "Allocation",
    "Baseline",
    "BaselineComparison",
    "Cost",
    "CostError",
    "Outcome",
    "Prices",
    "Window",
    "against",
    "cost",
    "pools_from_hosts",
    "site_costs",
]
