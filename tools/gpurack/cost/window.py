"""The cost of one window, read from where it was recorded: the inventory's prices and capacity,
the acceptance runs in the inventory DB and, when asked, Kueue's Workloads in the cluster."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance import (
    VARIABLE as ACCEPTANCE_VARIABLE,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance import SettingsError, read_settings
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost import Baseline, Window

from gpurack import ansible_inventory, queue
from gpurack.cost import allocations, document, inputs
from gpurack.errors import UsageError
from gpurack.inventory import open_store


@dataclass(frozen=True, slots=True)
class CostQuery:
    """What to cost: the window, the inventory with the prices, the DB, and the kubeconfig of
    the cluster whose Kueue Workloads count too (None: the recorded runs only)."""

    since: datetime
    until: datetime
    inventory: Path
    db: str | None = None
    kueue_kubeconfig: Path | None = None


def _baseline(inventory: Path) -> Baseline | None:
    value = ansible_inventory.inventory_variable(inventory, ACCEPTANCE_VARIABLE)
    try:
        return read_settings(value).baseline
    except SettingsError as error:
        raise UsageError(f"{inventory}: {error}") from None


def window_cost(query: CostQuery, now: datetime) -> dict[str, Any]:
    """The cost document of `query`'s window, as far as it was observed by `now`.

    Raises:
        UsageError: the window is empty or unobserved, or the inventory cannot be costed.
        NotAssessedError: with a kubeconfig, the cluster cannot be read.
    """
    if query.since >= query.until:
        raise UsageError(
            f"--since ({query.since.isoformat()}) must be before --until ({query.until.isoformat()})"
        )
    priced = inputs.read(query.inventory)
    baseline = _baseline(query.inventory)
    with open_store(query.db, create=False) as store:
        runs = store.acceptance_runs(query.since, query.until)
        first = store.first_recorded()
    jobs = allocations.from_runs(runs)
    sources = [allocations.SOURCE_ACCEPTANCE]
    if query.kueue_kubeconfig is not None:
        workloads = queue.fetch(query.kueue_kubeconfig).workloads
        jobs += allocations.from_workloads(workloads, {view.record.name for view in runs}, now)
        sources.append(allocations.SOURCE_KUEUE)
    starts = [moment for moment in (first, *(job.allocation.start for job in jobs)) if moment is not None]
    window, clipped = document.observed(Window(query.since, query.until), now, min(starts, default=None))
    return document.build(window, priced, jobs, baseline, sources, clipped=clipped)
