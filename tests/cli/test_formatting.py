"""gpurack.formatting: the human form of measured values (no JSON, units, yes/no, — for missing)."""

from __future__ import annotations

from typing import Any

import pytest
from gpurack import formatting


@pytest.mark.parametrize(
    ("item", "unit", "expected"),
    [
        ({"speed_gts": 5.0, "width": 1}, None, "5 GT/s x1"),
        ({"speed_gts": 16.0, "width": 16}, None, "16 GT/s x16"),
        ({"gen": 5, "width": 16}, None, "Gen5 x16"),
        (["hw_slowdown"], None, "hw_slowdown"),
        (["hw_slowdown", "hw_power_brake_slowdown"], None, "hw_slowdown, hw_power_brake_slowdown"),
        ([], None, "none"),
        ({}, None, "none"),
        ({"state": "ACTIVE", "phys_state": "LinkUp"}, None, "state ACTIVE, phys state LinkUp"),
        ({"volatile": 0, "aggregate": 2}, "errors", "volatile 0 errors, aggregate 2 errors"),
        ({"active": 18, "inactive": 0}, "links", "active 18 links, inactive 0 links"),
        ({"rate_gbps": 400, "ports": 8}, None, "rate 400 Gb/s, ports 8"),
        (True, None, "yes"),
        (False, None, "no"),
        (None, "GB/s", "—"),
        ("", None, "—"),
        ("Gen5 x8", None, "Gen5 x8"),
        (55.386, "GB/s", "55.39 GB/s"),
        (4.272, "TB/s", "4.272 TB/s"),
        (989.4, "TFLOP/s", "989.4 TFLOP/s"),
        (801.608, "TFLOP/s", "801.6 TFLOP/s"),
        (0.996, "min/median", "0.996 min/median"),
        (8, None, "8"),
        (3, "count", "3"),
        (83, "C", "83 °C"),
        (143771, "MiB", "143,771 MiB (140.4 GiB)"),
        (512, "MiB", "512 MiB"),
        (87.94, "%", "87.9%"),
        (42.5, "s", "42.5 s"),
        (725, "s", "12 min 5 s"),
        (7380, "s", "2 h 3 min"),
        ([79, 48], None, "79, 48"),
    ],
)
def test_value_is_human_text(item: Any, unit: str | None, expected: str) -> None:
    assert formatting.value(item, unit) == expected


@pytest.mark.parametrize(
    ("x", "expected"),
    [(5.0, "5"), (0, "0"), (12345.6, "12,346"), (1e-7, "0"), (-2.5, "-2.5"), (100.0, "100"), (9999, "9999")],
)
def test_number_keeps_four_significant_digits_without_exponent(x: float, expected: str) -> None:
    assert formatting.number(x) == expected


def test_values_never_print_json() -> None:
    for item in ({"speed_gts": 5.0, "width": 1}, ["a", "b"], {"nested": {"x": 1}}, [[1, 2]]):
        shown = formatting.value(item)
        assert not any(c in shown for c in '{}[]"'), shown


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ([0, 1, 2, 3, 4, 5, 6, 7], "0\N{EN DASH}7"),
        ([0, 1, 4, 5, 6], "0, 1, 4\N{EN DASH}6"),
        ([7, 3, 3, 5], "3, 5, 7"),
        ([], ""),
    ],
)
def test_ranges_compacts_runs_of_three_or_more(numbers: list[int], expected: str) -> None:
    assert formatting.ranges(numbers) == expected


def test_ranges_puts_the_prefix_on_each_part() -> None:
    assert formatting.ranges([0, 1, 4, 5, 6, 7], prefix="mlx5_") == "mlx5_0, mlx5_1, mlx5_4\N{EN DASH}7"


@pytest.mark.parametrize(
    ("pcie", "expected"),
    [
        ({"gen_current": 5, "width_current": 16, "gen_max": 5, "width_max": 16}, "Gen5 x16"),
        ({"gen_current": 5, "width_current": 8, "gen_max": 5, "width_max": 16}, "Gen5 x8 (max Gen5 x16)"),
        ({"gen_current": 4, "width_current": 16}, "Gen4 x16"),
        ({}, "—"),
    ],
)
def test_pcie_now_max_names_the_maximum_only_when_below_it(pcie: dict[str, Any], expected: str) -> None:
    assert formatting.pcie_now_max(pcie) == expected


@pytest.mark.parametrize(
    ("iso", "expected"),
    [
        ("2026-11-30T09:00:05.123456+00:00", "2026-11-30 09:00:05 UTC"),
        ("2026-11-30T10:00:05+01:00", "2026-11-30 10:00:05 UTC+0100"),
        ("2026-11-30T09:00:05", "2026-11-30 09:00:05"),
        (None, "—"),
        ("yesterday", "yesterday"),
    ],
)
def test_timestamp_is_readable(iso: str | None, expected: str) -> None:
    assert formatting.timestamp(iso) == expected


def test_yes_no_text_and_plural() -> None:
    assert [formatting.yes_no(True), formatting.yes_no(False), formatting.yes_no(None)] == ["yes", "no", "—"]
    assert [formatting.text(None), formatting.text(""), formatting.text(0)] == ["—", "—", "0"]
    assert [formatting.plural(1, "node"), formatting.plural(2, "node")] == ["1 node", "2 nodes"]
    assert [formatting.percent(None), formatting.mib(None), formatting.duration(None)] == ["—"] * 3


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ("6.1.0-41-amd64", "6.1.0-42-amd64", "6.1.0-41-amd64 → 6.1.0-42-amd64"),
        ("580.95.05", "580.95.05", "580.95.05"),
        ("", "580.105.08", "— → 580.105.08"),
        ("580.95.05", None, "580.95.05 → —"),
        (None, None, "—"),
    ],
)
def test_change_names_both_sides_only_when_they_differ(
    before: str | None, after: str | None, expected: str
) -> None:
    assert formatting.change(before, after) == expected
