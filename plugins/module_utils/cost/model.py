# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The cost of accepted work, by the seed's formula (DESIGN.md, "Observability and cost"):

    effective_cost = (compute + network + storage + support + idle + failed_runs + operations)
                     / accepted_units

over a window, from each pool's GPU capacity and price per GPU-hour, the GPU allocations
seen in the window (a job's pods: GPUs, start, end, outcome) and the site's monthly costs.
Pure arithmetic; where the allocations come from (Kueue, pod lifetimes, Prometheus) is not
this module's concern. Stdlib only: the acceptance filter runs it in the playbook too.

- An allocation counts only inside the window (clipped at both ends).
- compute: the GPU-hours of allocations that did not fail, at their pool's price;
  failed_runs: those of failed allocations; idle: the pool's capacity left unallocated. The
  three add up to every pool's whole capacity at its price.
- network, storage, support, operations: monthly, prorated by the window's hours over
  HOURS_PER_MONTH.
- accepted units: what accepted allocations delivered (samples, tokens: one unit per site).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, get_args

HOURS_PER_MONTH = 730.0  # 365 days x 24 h / 12
Outcome = Literal["accepted", "failed", "other"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
SITE_COSTS = ("network", "storage", "support", "operations")


class CostError(ValueError):
    """The inputs cannot be costed: a malformed window, count, price or allocation (one line)."""


@dataclass(frozen=True, slots=True)
class Window:
    """The period costed, `since` (inclusive) to `until` (exclusive)."""

    since: datetime
    until: datetime

    @property
    def hours(self) -> float:
        return (self.until - self.since).total_seconds() / 3600


@dataclass(frozen=True, slots=True)
class Allocation:
    """GPUs held by one job's pods from `start` to `end`, and how the job ended."""

    pool: str
    gpus: int
    start: datetime
    end: datetime
    outcome: Outcome
    units: float = 0.0  # accepted units delivered (accepted jobs only)

    def hours_in(self, window: Window) -> float:
        start, end = max(self.start, window.since), min(self.end, window.until)
        return max((end - start).total_seconds() / 3600, 0.0)


@dataclass(frozen=True, slots=True)
class Prices:
    """Each pool's price per GPU-hour, and the site's monthly costs."""

    gpu_hour: Mapping[str, float]
    monthly: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class PoolCost:
    """One pool's GPU-hours in the window and what they cost."""

    pool: str
    capacity_gpu_hours: float
    allocated_gpu_hours: float
    useful_gpu_hours: float
    failed_gpu_hours: float
    idle_gpu_hours: float
    compute: float
    failed_runs: float
    idle: float


@dataclass(frozen=True, slots=True)
class Cost:
    """The window's cost by the seed's terms, and per accepted unit (None without any)."""

    window_hours: float
    pools: tuple[PoolCost, ...]
    compute: float
    network: float
    storage: float
    support: float
    idle: float
    failed_runs: float
    operations: float
    accepted_units: float

    @property
    def total(self) -> float:
        terms = (self.compute, self.network, self.storage, self.support)
        return sum(terms) + self.idle + self.failed_runs + self.operations

    @property
    def effective_cost(self) -> float | None:
        return self.total / self.accepted_units if self.accepted_units > 0 else None


def _money(amount: float) -> bool:
    """A price or cost that can be added up: finite and not negative."""
    return math.isfinite(amount) and amount >= 0


def amount(value: object, positive: bool = False) -> float | None:
    """`value` as a price, cost or threshold read from an inventory, or None when it is none:
    a bool, text, NaN, infinity, a number too large for a float, a negative one (or 0 when
    `positive`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    if not _money(number) or (positive and number == 0):
        return None
    return number


def _checked(
    window: Window, capacity: Mapping[str, int], allocations: Sequence[Allocation], prices: Prices
) -> None:
    """Raises: CostError for an empty window, a negative count or price, an allocation that
    ends before it starts, or a pool without a price."""
    if window.hours <= 0:
        raise CostError(f"the cost window must end after it starts ({window.since} to {window.until})")
    for pool, gpus in capacity.items():
        if gpus < 0:
            raise CostError(f"pool {pool}: a GPU count cannot be negative, got {gpus}")
        price = prices.gpu_hour.get(pool)
        if price is None:
            raise CostError(f"pool {pool}: no price per GPU-hour (gpurack_pool.cost.gpu_hour)")
        if not _money(price):
            raise CostError(f"pool {pool}: gpu_hour must be a finite number of at least 0, got {price}")
    for name, value in prices.monthly.items():
        if name not in SITE_COSTS or not _money(value):
            raise CostError(f"site cost {name}={value}: one of {', '.join(SITE_COSTS)}, not negative")
    for a in allocations:
        if a.end < a.start or a.gpus < 0 or a.units < 0:
            raise CostError(f"allocation on {a.pool} ({a.start} to {a.end}, {a.gpus} GPUs) is not valid")
        if a.pool not in capacity:
            raise CostError(f"allocation on pool {a.pool}, which the inventory does not have")


def _pool_cost(pool: str, gpus: int, price: float, window: Window, mine: Sequence[Allocation]) -> PoolCost:
    allocated = sum(a.gpus * a.hours_in(window) for a in mine)
    useful = sum(a.gpus * a.hours_in(window) for a in mine if a.outcome == "accepted")
    failed = sum(a.gpus * a.hours_in(window) for a in mine if a.outcome == "failed")
    capacity = gpus * window.hours
    # More allocated than the pool holds (clock skew, a node added in the window) leaves no idle.
    idle = max(capacity - allocated, 0.0)
    return PoolCost(
        pool=pool,
        capacity_gpu_hours=capacity,
        allocated_gpu_hours=allocated,
        useful_gpu_hours=useful,
        failed_gpu_hours=failed,
        idle_gpu_hours=idle,
        compute=(allocated - failed) * price,
        failed_runs=failed * price,
        idle=idle * price,
    )


def cost(
    window: Window, capacity: Mapping[str, int], allocations: Sequence[Allocation], prices: Prices
) -> Cost:
    """The window's cost of every pool of `capacity` (GPUs per pool).

    Raises:
        CostError: as `_checked`.
    """
    _checked(window, capacity, allocations, prices)
    pools = tuple(
        _pool_cost(pool, gpus, prices.gpu_hour[pool], window, [a for a in allocations if a.pool == pool])
        for pool, gpus in sorted(capacity.items())
    )
    share = window.hours / HOURS_PER_MONTH
    monthly = {name: prices.monthly.get(name, 0.0) * share for name in SITE_COSTS}
    return Cost(
        window_hours=window.hours,
        pools=pools,
        compute=sum(p.compute for p in pools),
        network=monthly["network"],
        storage=monthly["storage"],
        support=monthly["support"],
        idle=sum(p.idle for p in pools),
        failed_runs=sum(p.failed_runs for p in pools),
        operations=monthly["operations"],
        accepted_units=sum(a.units for a in allocations if a.outcome == "accepted"),
    )


@dataclass(frozen=True, slots=True)
class Baseline:
    """What the same accepted work would cost elsewhere: renting GPUs (per GPU-hour, for the
    useful GPU-hours) or an API (per accepted unit)."""

    kind: Literal["gpu_hour", "unit"]
    price: float


@dataclass(frozen=True, slots=True)
class BaselineComparison:
    baseline_cost: float
    our_cost: float

    @property
    def ratio(self) -> float | None:
        """Our cost over the baseline's: below 1 is cheaper than the baseline."""
        return self.our_cost / self.baseline_cost if self.baseline_cost > 0 else None


def against(result: Cost, baseline: Baseline) -> BaselineComparison:
    """The window's total against the baseline's price of its accepted work.

    Raises:
        CostError: a negative baseline price.
    """
    if not _money(baseline.price):
        raise CostError(f"the baseline price must be a finite number of at least 0, got {baseline.price}")
    if baseline.kind == "gpu_hour":
        work = sum(p.useful_gpu_hours for p in result.pools)
    else:
        work = result.accepted_units
    return BaselineComparison(baseline_cost=work * baseline.price, our_cost=result.total)
