"""The cost per accepted unit of a window (docs/cost.md): its inputs from the inventory
(`inputs`), its GPU allocations (`allocations`), the document that cost.json, cost.md and
cost.html render (`document`), and the read of all of them for one window (`window`).
`gpurack cost` is the command; the formula itself is module_utils/cost's."""

from __future__ import annotations

from gpurack.cost.allocations import SOURCE_ACCEPTANCE, SOURCE_KUEUE, Job, from_runs, from_workloads
from gpurack.cost.document import KIND, allocation_steps, build, impossible, observed
from gpurack.cost.inputs import CostInputs
from gpurack.cost.inputs import read as read_inputs
from gpurack.cost.window import CostQuery, window_cost

__all__ = [
    "KIND",
    "SOURCE_ACCEPTANCE",
    "SOURCE_KUEUE",
    "CostInputs",
    "CostQuery",
    "Job",
    "allocation_steps",
    "build",
    "from_runs",
    "from_workloads",
    "impossible",
    "observed",
    "read_inputs",
    "window_cost",
]
