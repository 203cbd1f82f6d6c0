"""Where each server NIC is cabled, recorded by fabric runs, on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from gpurack.cli import main
from gpurack.db import MIGRATIONS, Base, database_url, head_revision
from gpurack.db.models import Node, Run
from gpurack.errors import ExitCode, UsageError
from gpurack.inventory import LinkRecord, NodeRecord, RunRecord, Store, open_store
from inventory_helpers import hgx_facts
from pg_helpers import BACKENDS, backend_url
from sqlalchemy import Connection, create_engine, insert, inspect, text

SOURCE = "inventory:/site/hosts.yml"


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return backend_url(request.param, tmp_path)


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with open_store(db_url) as opened:
        yield opened


def _at(day: int) -> datetime:
    return datetime(2026, 12, day, 12, tzinfo=UTC)


def _fabric(store: Store, day: int, links: dict[str, Sequence[LinkRecord]]) -> int:
    return store.record_links(RunRecord(kind="fabric", source=SOURCE, started=_at(day)), links)


def _validate(store: Store, day: int, host: str = "gpu01") -> int:
    return store.record(
        RunRecord(kind="validate", started=_at(day)), [NodeRecord(host, "h200", "local", hgx_facts())]
    )


def _on(nic: str, switch: str | None, port: str | None) -> LinkRecord:
    return LinkRecord(nic, switch, port, f"gpu01 {nic}" if switch else None)


BEFORE = [
    _on("mlx5_0", "leaf1", "Ethernet1/1"),
    _on("mlx5_1", "leaf1", "Ethernet1/2"),
    _on("mlx5_2", None, None),
    _on("mlx5_3", "leaf1", "Ethernet1/3"),
]
# mlx5_3 moved, mlx5_1 is no longer seen, mlx5_2 is now seen.
AFTER = [
    _on("mlx5_0", "leaf1", "Ethernet1/1"),
    _on("mlx5_1", None, None),
    _on("mlx5_2", "leaf2", "Ethernet1/6"),
    _on("mlx5_3", "leaf2", "Ethernet1/7"),
]
SENTENCES = [
    "mlx5_1 is no longer seen on a switch (was leaf1 Ethernet1/2)",
    "mlx5_2 is now seen on leaf2 Ethernet1/6",
    "mlx5_3 moved from leaf1 Ethernet1/3 to leaf2 Ethernet1/7",
    # The node itself: its NICs are now seen on two leaves, so its leaf label changes.
    "the node moved: seen on leaf1, leaf2, was on leaf1 (its leaf label follows)",
]
MOVED = [_on(link.nic, "leaf2", "Ethernet1/7") if link.nic == "mlx5_3" else link for link in BEFORE]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_diff_between_two_fabric_runs_moved_lost_found(store: Store) -> None:
    steady = [_on("mlx5_0", "leaf3", "Ethernet1/1")]
    first = _fabric(store, 1, {"gpu01": BEFORE, "gpu02": steady})
    second = _fabric(store, 2, {"gpu01": AFTER, "gpu02": steady})
    comparison = store.compare("gpu01")
    assert [d.sentence for d in comparison.drifts] == SENTENCES
    assert [d.kind for d in comparison.drifts] == ["link_lost", "link_found", "link_moved", "leaves_changed"]
    assert (comparison.from_fabric_run, comparison.to_fabric_run) == (first, second)
    assert (comparison.from_run, comparison.to_run) == (None, None)  # no snapshot of gpu01
    assert store.diff("gpu02") == []
    # Back again: the reverse sentences.
    assert [d.sentence for d in store.diff("gpu01", from_run=second, to_run=first)] == [
        "mlx5_1 is now seen on leaf1 Ethernet1/2",
        "mlx5_2 is no longer seen on a switch (was leaf2 Ethernet1/6)",
        "mlx5_3 moved from leaf2 Ethernet1/7 to leaf1 Ethernet1/3",
        "the node moved: seen on leaf1, was on leaf1, leaf2 (its leaf label follows)",
    ]


def test_nic_absent_from_the_later_run_is_no_longer_seen(store: Store) -> None:
    _fabric(store, 1, {"gpu01": BEFORE})
    _fabric(store, 2, {"gpu01": BEFORE[:3]})
    assert [d.sentence for d in store.diff("gpu01")] == [
        "mlx5_3 is no longer seen on a switch (was leaf1 Ethernet1/3)"
    ]


def test_inventory_diff_json_and_text_show_link_drift(
    capsys: pytest.CaptureFixture[str], store: Store, db_url: str
) -> None:
    first = _fabric(store, 1, {"gpu01": BEFORE})
    second = _fabric(store, 2, {"gpu01": AFTER})
    code, out, err = _cli(capsys, "inventory", "diff", "gpu01", "--json", "--db", db_url)
    assert (code, err) == (ExitCode.OK, "")
    data = json.loads(out)
    assert (data["from_run"], data["to_run"]) == (None, None)
    assert (data["from_fabric_run"], data["to_fabric_run"]) == (first, second)
    assert [d["sentence"] for d in data["drift"]] == SENTENCES
    assert data["drift"][2] == {
        "kind": "link_moved",
        "component": "link:mlx5_3",
        "before": "leaf1 Ethernet1/3",
        "after": "leaf2 Ethernet1/7",
        "sentence": SENTENCES[2],
    }
    code, out, _ = _cli(capsys, "inventory", "diff", "gpu01", "--db", db_url)
    assert out.splitlines() == [
        f"gpu01: fabric run {first} -> run {second}: 4 changes",
        *(f"  - {sentence}" for sentence in SENTENCES),
    ]


def test_host_with_only_fabric_runs_is_a_node_without_snapshots(
    capsys: pytest.CaptureFixture[str], store: Store, db_url: str
) -> None:
    run_id = _fabric(store, 1, {"gpu09": BEFORE})
    (node,) = store.list_nodes()
    assert (node.host, node.pool, node.runs, node.last_run, node.gpus) == ("gpu09", None, 0, None, 0)
    assert node.first_seen == node.last_seen == _at(1)
    assert store.history("gpu09") == []
    comparison = store.compare("gpu09")
    assert (comparison.from_fabric_run, comparison.to_fabric_run, comparison.drifts) == (None, run_id, ())
    code, out, _ = _cli(capsys, "inventory", "diff", "gpu09", "--db", db_url)
    assert (code, out) == (ExitCode.OK, f"gpu09: only one fabric run (run {run_id}), nothing to compare\n")
    with pytest.raises(UsageError, match="has no snapshots"):
        store.snapshot("gpu09")


def test_fabric_run_updates_a_known_node_and_writes_no_snapshot(store: Store) -> None:
    validated = _validate(store, 1)
    _fabric(store, 3, {"gpu01": BEFORE})
    (node,) = store.list_nodes()
    assert (node.pool, node.runs, node.last_run, node.gpus) == ("h200", 1, validated, 8)
    assert (node.first_seen, node.last_seen) == (_at(1), _at(3))
    assert [h.run_id for h in store.history("gpu01")] == [validated]
    assert store.run().run_id == validated  # the latest run to report holds snapshots
    assert store.compare("gpu01").from_fabric_run is None


def test_snapshot_run_between_fabric_runs_no_hardware_drift_from_a_fabric_run(store: Store) -> None:
    first_validate = _validate(store, 1)
    first_fabric = _fabric(store, 2, {"gpu01": BEFORE})
    second_validate = _validate(store, 3)
    second_fabric = _fabric(store, 4, {"gpu01": MOVED})
    moved = [
        "mlx5_3 moved from leaf1 Ethernet1/3 to leaf2 Ethernet1/7",
        "the node moved: seen on leaf1, leaf2, was on leaf1 (its leaf label follows)",
    ]
    comparison = store.compare("gpu01")
    assert [d.sentence for d in comparison.drifts] == moved
    assert (comparison.from_run, comparison.to_run) == (first_validate, second_validate)
    assert (comparison.from_fabric_run, comparison.to_fabric_run) == (first_fabric, second_fabric)
    # From the snapshot run to the fabric run: the links of the latest fabric run at or before each.
    comparison = store.compare("gpu01", from_run=second_validate, to_run=second_fabric)
    assert [d.sentence for d in comparison.drifts] == moved
    assert (comparison.to_run, comparison.from_fabric_run) == (None, first_fabric)
    assert store.diff("gpu01", from_run=first_validate, to_run=first_fabric) == []
    assert store.diff("gpu01", from_run=first_fabric, to_run=second_validate) == []
    assert store.diff("gpu01", to_run=second_fabric) == list(comparison.drifts)


def test_snapshot_only_runs_given_compare_the_links_at_or_before_them(store: Store) -> None:
    _fabric(store, 1, {"gpu01": BEFORE})
    first = _validate(store, 2)
    _fabric(store, 3, {"gpu01": MOVED})
    second = _validate(store, 4)
    kinds = [d.kind for d in store.diff("gpu01", from_run=first, to_run=second)]
    assert kinds == ["link_moved", "leaves_changed"]
    assert store.diff("gpu01", from_run=first, to_run=first) == []


def test_unknown_host_or_run_is_usage_error(store: Store) -> None:
    _fabric(store, 1, {"gpu01": BEFORE})
    with pytest.raises(UsageError, match="unknown host 'gpu99'"):
        store.compare("gpu99")
    with pytest.raises(UsageError, match="no snapshot in run 42"):
        store.compare("gpu01", from_run=42)


def test_record_links_refuses_a_nic_twice_or_another_kind_and_writes_nothing(store: Store) -> None:
    with pytest.raises(UsageError, match="gpu01 lists NIC twice: mlx5_0"):
        _fabric(store, 1, {"gpu01": [*BEFORE, BEFORE[0]]})
    with pytest.raises(UsageError, match="fabric run"):
        store.record_links(RunRecord(kind="validate"), {"gpu01": BEFORE})
    assert store.list_nodes() == []


def test_deleting_a_fabric_run_deletes_its_links(store: Store) -> None:
    run_id = _fabric(store, 1, {"gpu01": BEFORE})
    with store.database.engine.begin() as conn:
        conn.execute(text("DELETE FROM runs WHERE id = :id"), {"id": run_id})
        assert conn.execute(text("SELECT count(*) FROM switch_links")).scalar() == 0


def _alembic(conn: Connection) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = conn
    return cfg


def test_migration_0003_upgrades_a_0002_database_and_keeps_its_rows(db_url: str) -> None:
    engine = create_engine(database_url(db_url))
    try:
        with engine.begin() as conn:
            command.upgrade(_alembic(conn), "0002")
            assert "switch_links" not in inspect(conn).get_table_names()
            conn.execute(
                insert(Node), [{"host": "gpu01", "pool": "h200", "first_seen": _at(1), "last_seen": _at(1)}]
            )
            conn.execute(
                insert(Run),
                [{"started": _at(1), "kind": "validate", "source": "local", "status": "successful"}],
            )
    finally:
        engine.dispose()
    with open_store(db_url) as store:
        run_id = _fabric(store, 2, {"gpu01": BEFORE, "gpu02": AFTER})
        assert run_id == 2
        assert [(n.host, n.pool) for n in store.list_nodes()] == [("gpu01", "h200"), ("gpu02", None)]
        with store.database.engine.connect() as conn:
            context = MigrationContext.configure(conn)
            assert context.get_current_revision() == head_revision()
            assert compare_metadata(context, Base.metadata) == []
    engine = create_engine(database_url(db_url))
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic(conn), "0002")
            assert "switch_links" not in inspect(conn).get_table_names()
    finally:
        engine.dispose()
