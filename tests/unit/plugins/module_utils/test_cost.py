"""The cost of accepted work against a case computed by hand (the seed's formula)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.model import (
    HOURS_PER_MONTH,
    Allocation,
    Baseline,
    CostError,
    Prices,
    Window,
    against,
    cost,
)

T0 = datetime(2026, 12, 1, 0, tzinfo=UTC)
WINDOW = Window(T0, T0 + timedelta(hours=10))


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


# Pool h100: 8 GPUs at 2.00 per GPU-hour; pool h200: 1 GPU at 4.00, never used.
CAPACITY = {"h100": 8, "h200": 1}
PRICES = Prices(
    gpu_hour={"h100": 2.0, "h200": 4.0},
    monthly={"network": HOURS_PER_MONTH, "storage": 2 * HOURS_PER_MONTH, "operations": HOURS_PER_MONTH / 2},
)
ALLOCATIONS = [
    Allocation("h100", 4, at(1), at(6), "accepted", units=1000),  # 20 GPU-h, useful
    Allocation("h100", 2, at(6), at(8.5), "failed"),  # 5 GPU-h, failed
    Allocation("h100", 1, at(-2), at(12), "other"),  # 14 h, 10 inside the window
]


def test_the_hand_computed_case() -> None:
    result = cost(WINDOW, CAPACITY, ALLOCATIONS, PRICES)
    h100, h200 = result.pools
    # h100: capacity 80 GPU-h; allocated 20 + 5 + 10 = 35; useful 20; failed 5; idle 45.
    assert (h100.capacity_gpu_hours, h100.allocated_gpu_hours) == (80, 35)
    assert (h100.useful_gpu_hours, h100.failed_gpu_hours, h100.idle_gpu_hours) == (20, 5, 45)
    # h200: 10 GPU-h idle at 4.00.
    assert (h200.idle_gpu_hours, h200.idle) == (10, 40)
    # compute (35 - 5) x 2 = 60; failed 5 x 2 = 10; idle 45 x 2 + 40 = 130.
    assert (result.compute, result.failed_runs, result.idle) == (60, 10, 130)
    # Monthly costs prorated by 10 of 730 hours: network 730 -> 10, storage 1460 -> 20, operations 365 -> 5.
    assert (result.network, result.storage, result.support, result.operations) == pytest.approx(
        (10, 20, 0, 5)
    )
    # 60 + 10 + 20 + 0 + 130 + 10 + 5 = 235 over 1000 accepted units.
    assert result.total == pytest.approx(235)
    assert result.effective_cost == pytest.approx(0.235)


def test_compute_failed_and_idle_add_up_to_the_whole_capacity() -> None:
    result = cost(WINDOW, CAPACITY, ALLOCATIONS, PRICES)
    whole = sum(p.capacity_gpu_hours * PRICES.gpu_hour[p.pool] for p in result.pools)
    assert result.compute + result.failed_runs + result.idle == pytest.approx(whole)


def test_against_a_rental_and_an_api_baseline() -> None:
    result = cost(WINDOW, CAPACITY, ALLOCATIONS, PRICES)
    rental = against(result, Baseline("gpu_hour", 3.0))  # 20 useful GPU-h x 3.00
    assert (rental.baseline_cost, rental.our_cost) == pytest.approx((60, 235))
    assert rental.ratio == pytest.approx(235 / 60)
    api = against(result, Baseline("unit", 0.5))  # 1000 units x 0.50
    assert api.baseline_cost == pytest.approx(500) and api.ratio == pytest.approx(0.47)


def test_no_accepted_unit_has_no_cost_per_unit() -> None:
    result = cost(WINDOW, CAPACITY, ALLOCATIONS[1:], PRICES)
    assert result.accepted_units == 0 and result.effective_cost is None
    assert against(result, Baseline("unit", 1.0)).ratio is None


def test_overallocation_leaves_no_negative_idle() -> None:
    crowded = [Allocation("h200", 2, at(0), at(10), "accepted", units=1)]
    (_, h200) = cost(WINDOW, CAPACITY, crowded, PRICES).pools
    assert h200.idle_gpu_hours == 0 and h200.allocated_gpu_hours == 20


@pytest.mark.parametrize(
    ("window", "capacity", "allocations", "prices", "message"),
    [
        (Window(at(1), at(1)), CAPACITY, [], PRICES, "must end after it starts"),
        (WINDOW, {"b200": 8}, [], PRICES, "pool b200: no price per GPU-hour"),
        (WINDOW, {"h100": -1}, [], PRICES, "cannot be negative"),
        (WINDOW, CAPACITY, [Allocation("h100", 1, at(2), at(1), "other")], PRICES, "is not valid"),
        (
            WINDOW,
            CAPACITY,
            [Allocation("a100", 1, at(1), at(2), "other")],
            PRICES,
            "pool a100, which",
        ),
        (WINDOW, CAPACITY, [], Prices({"h100": 2.0, "h200": 1.0}, {"coffee": 5.0}), "site cost coffee"),
    ],
)
def test_bad_input_is_a_usage_error(
    window: Window, capacity: dict[str, int], allocations: list[Allocation], prices: Prices, message: str
) -> None:
    with pytest.raises(CostError, match=message):
        cost(window, capacity, allocations, prices)
