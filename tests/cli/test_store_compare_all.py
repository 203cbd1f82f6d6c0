"""`Store.compare_all()`: every host's default comparison in one read, equal to `compare(host)` per host."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from gpurack.errors import UsageError
from gpurack.inventory import LinkRecord, NodeRecord, PatchRecord, RunRecord, Store, open_store
from inventory_helpers import hgx_facts, result
from pg_helpers import BACKENDS, backend_url
from sqlalchemy import event


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with open_store(backend_url(request.param, tmp_path)) as opened:
        yield opened


def _at(day: int) -> datetime:
    return datetime(2026, 12, day, 12, tzinfo=UTC)


def _node(host: str, facts: dict[str, Any], verdict: str = "pass") -> NodeRecord:
    return NodeRecord(host, "h200", "ansible", facts, results=[result("gpu.pcie", verdict, "gpu5")])


def _validate(store: Store, day: int, nodes: Sequence[NodeRecord]) -> int:
    return store.record(RunRecord("validate", started=_at(day)), nodes)


def _fabric(store: Store, day: int, links: dict[str, Sequence[LinkRecord]]) -> int:
    return store.record_links(RunRecord("fabric", source="switches.yml", started=_at(day)), links)


def _cabled(host: str, moved: str | None = None) -> list[LinkRecord]:
    """Four NICs of `host` on leaf1; `moved` on leaf2 instead."""
    return [
        LinkRecord(nic, "leaf2" if nic == moved else "leaf1", f"Ethernet1/{i}", f"{host} {nic}")
        for i, nic in enumerate(("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"))
    ]


def _swapped() -> dict[str, Any]:
    facts = hgx_facts()
    facts["gpurack_gpu"]["gpus"][3]["serial"] = "1654924064999"
    return facts


def _halved() -> dict[str, Any]:
    facts = hgx_facts()
    facts["gpurack_gpu"]["gpus"][5]["pcie"]["width_current"] = 8
    return facts


def _record_fleet(store: Store) -> None:
    """gpu01: 3 snapshots (swap in the last) and 3 fabric runs (a move in the last); gpu02: one
    snapshot; gpu03: fabric runs only; gpu04: missing from run 2, then a halved link and a
    failing check, one fabric run; gpu05: unchanged; gpu06: patched, never seen."""
    _validate(store, 1, [_node(h, hgx_facts()) for h in ("gpu01", "gpu04", "gpu05")])
    _fabric(store, 2, {"gpu01": _cabled("gpu01"), "gpu03": _cabled("gpu03")})
    _validate(store, 3, [_node("gpu01", hgx_facts()), _node("gpu05", hgx_facts())])
    _fabric(store, 4, {"gpu01": _cabled("gpu01"), "gpu03": _cabled("gpu03", moved="mlx5_1")})
    _validate(
        store,
        5,
        [
            _node("gpu01", _swapped()),
            _node("gpu02", hgx_facts()),
            _node("gpu04", _halved(), "fail"),
            _node("gpu05", hgx_facts()),
        ],
    )
    _fabric(store, 6, {"gpu01": _cabled("gpu01", moved="mlx5_3"), "gpu04": _cabled("gpu04")})
    store.record(RunRecord("run", playbook="patch.yml", started=_at(7)), [], [PatchRecord("gpu06", "held")])


def test_compare_all_equals_compare_of_each_host(store: Store) -> None:
    _record_fleet(store)
    with pytest.raises(UsageError, match="has no snapshots"):
        store.compare("gpu06")
    compared = [h for h in store.hosts() if h != "gpu06"]
    assert store.compare_all() == [store.compare(h) for h in compared]


def test_compare_all_pairs_and_drift_per_host(store: Store) -> None:
    _record_fleet(store)
    found = {c.host: c for c in store.compare_all()}
    assert sorted(found) == ["gpu01", "gpu02", "gpu03", "gpu04", "gpu05"]
    pairs = {h: (c.from_run, c.to_run, c.from_fabric_run, c.to_fabric_run) for h, c in found.items()}
    assert pairs == {
        "gpu01": (3, 5, 4, 6),
        "gpu02": (None, 5, None, None),
        "gpu03": (None, None, 2, 4),
        "gpu04": (1, 5, None, 6),
        "gpu05": (3, 5, None, None),
    }
    assert {h: [d.kind for d in c.drifts] for h, c in found.items()} == {
        "gpu01": ["gpu_swapped", "link_moved", "leaves_changed"],
        "gpu02": [],
        "gpu03": ["link_moved", "leaves_changed"],
        "gpu04": ["pcie_downgraded", "verdict_changed"],
        "gpu05": [],
    }


def test_compare_all_reads_in_as_many_queries_for_more_hosts(store: Store) -> None:
    """The number of statements does not grow with the hosts (the per-host diff made ~15 each)."""

    def statements(hosts: int) -> int:
        for day in (1, 2):
            _validate(store, day, [_node(f"n{hosts}-{i}", hgx_facts()) for i in range(hosts)])
        seen: list[str] = []
        engine = store.database.engine
        listener = lambda *args: seen.append(args[2])  # noqa: E731 - (conn, cursor, statement, ...)
        event.listen(engine, "before_cursor_execute", listener)
        try:
            store.compare_all()
        finally:
            event.remove(engine, "before_cursor_execute", listener)
        return len(seen)

    few = statements(2)
    assert statements(20) == few
    assert few <= 10


def test_compare_all_of_an_empty_inventory_is_empty(store: Store) -> None:
    assert store.compare_all() == []
