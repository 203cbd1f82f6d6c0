"""Acceptance runs in the inventory DB, on SQLite and on a real PostgreSQL server: their rows,
their GPUs' allocation, and the window query `gpurack cost` reads."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.model import Outcome
from gpurack.db import MIGRATIONS, database_url, head_revision
from gpurack.errors import UsageError
from gpurack.inventory import AcceptanceRecord, NodeRecord, RunRecord, Store, open_store
from inventory_helpers import hgx_facts
from pg_helpers import BACKENDS, backend_url
from sqlalchemy import Connection, create_engine, inspect, text

T0 = datetime(2026, 12, 1, 10, tzinfo=UTC)
ROWS = (
    {"id": "accept.queue", "verdict": "pass", "measured": 4.0, "unit": "s", "reason": "admitted at once"},
    {
        "id": "accept.restore",
        "verdict": "fail",
        "measured": 31.5,
        "unit": "s",
        "reason": "steps_lost 14 is not <= 10",
    },
)


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return backend_url(request.param, tmp_path)


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with open_store(db_url) as opened:
        yield opened


def _acceptance(name: str, hours: tuple[float, float], outcome: Outcome = "accepted") -> AcceptanceRecord:
    return AcceptanceRecord(
        name=name, team="alpha", queue="alpha", pool="lab-hgx-h100x8-ib", pods=2, gpus=2,
        started=T0 + timedelta(hours=hours[0]), finished=T0 + timedelta(hours=hours[1]),
        outcome=outcome, units=960.0 if outcome == "accepted" else 0.0,
        verdict="fail", results=ROWS, queue_wait_s=4.0, cost_total=0.2, cost_per_unit=0.2 / 960,
        currency="EUR",
    )  # fmt: skip


def _record(store: Store, record: AcceptanceRecord) -> int:
    return store.record_acceptance(
        RunRecord(kind="accept", source="inventory:lab", started=record.started), record
    )


def test_an_acceptance_run_keeps_its_rows_in_order(store: Store) -> None:
    run_id = _record(store, _acceptance("accept-1", (0, 0.05)))
    (view,) = store.acceptance_runs()
    assert view.run_id == run_id
    assert view.record == _acceptance("accept-1", (0, 0.05))
    assert [r["id"] for r in view.record.results] == ["accept.queue", "accept.restore"]


def test_the_window_takes_the_runs_whose_gpus_were_held_in_it(store: Store) -> None:
    for name, hours in (
        ("before", (0, 1)),
        ("across", (1.5, 2.5)),
        ("inside", (2.2, 2.4)),
        ("after", (3, 4)),
    ):
        _record(store, _acceptance(name, hours))
    found = store.acceptance_runs(T0 + timedelta(hours=2), T0 + timedelta(hours=3))
    assert [v.record.name for v in found] == ["across", "inside"]


def test_accept_runs_are_not_the_latest_run_of_a_report(store: Store) -> None:
    store.record(RunRecord(kind="validate", started=T0), [NodeRecord("gpu01", "h200", "local", hgx_facts())])
    _record(store, _acceptance("accept-1", (1, 2)))
    assert store.run().kind == "validate"


def test_a_run_of_another_kind_or_ending_before_it_starts_is_refused(store: Store) -> None:
    with pytest.raises(UsageError, match="in a 'validate' run"):
        store.record_acceptance(RunRecord(kind="validate"), _acceptance("a", (0, 1)))
    with pytest.raises(UsageError, match="ends before it starts"):
        _record(store, _acceptance("b", (1, 0)))
    assert store.acceptance_runs() == []


def test_migration_0004_adds_and_removes_the_acceptance_tables(db_url: str) -> None:
    with open_store(db_url) as store:
        _record(store, _acceptance("accept-1", (0, 1)))
        with store.database.engine.connect() as conn:
            assert MigrationContext.configure(conn).get_current_revision() == head_revision()
        with store.database.engine.begin() as conn:
            conn.execute(text("DELETE FROM runs"))
            assert conn.execute(text("SELECT count(*) FROM acceptance_steps")).scalar() == 0
    engine = create_engine(database_url(db_url))
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic(conn), "0003")
            assert not {"acceptance_runs", "acceptance_steps"} & set(inspect(conn).get_table_names())
            command.upgrade(_alembic(conn), "head")
    finally:
        engine.dispose()


def _alembic(conn: Connection) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = conn
    return cfg
