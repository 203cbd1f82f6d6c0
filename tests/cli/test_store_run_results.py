"""The results of a conformance run in the inventory DB: kept in order, read back with the run,
refused for another run kind, deleted with the run; migration 0006 adds and removes their table."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from gpurack.db import MIGRATIONS, database_url, head_revision
from gpurack.errors import UsageError
from gpurack.inventory import RunRecord, open_store
from pg_helpers import BACKENDS, backend_url
from sqlalchemy import create_engine, inspect, text

RESULTS = [
    {
        "id": "conformance.gang_scheduling.fits",
        "component": "gang_scheduling",
        "verdict": "pass",
        "reason": "",
    },
    {
        "id": "conformance.ai_inference",
        "component": "ai_inference",
        "verdict": "skip",
        "reason": "no gateway",
    },
]


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return backend_url(request.param, tmp_path)


def test_a_conformance_run_keeps_its_results_in_order(db_url: str) -> None:
    with open_store(db_url) as store:
        run_id = store.record_run_results(RunRecord(kind="conformance", playbook="conformance.yml"), RESULTS)
        view = store.run(run_id)
        assert view.kind == "conformance" and view.nodes == ()
        assert [dict(r) for r in view.results] == RESULTS
        with pytest.raises(UsageError, match="cannot record cluster results in a 'validate' run"):
            store.record_run_results(RunRecord(kind="validate"), RESULTS)
        with store.database.engine.begin() as conn:
            conn.execute(text("DELETE FROM runs WHERE id = :id"), {"id": run_id})
            assert conn.execute(text("SELECT count(*) FROM run_results")).scalar() == 0


def test_migration_0006_adds_and_removes_the_results_table(db_url: str) -> None:
    with open_store(db_url) as store:
        store.record_run_results(RunRecord(kind="conformance"), RESULTS)
        with store.database.engine.connect() as conn:
            assert MigrationContext.configure(conn).get_current_revision() == head_revision() == "0006"
    engine = create_engine(database_url(db_url))
    try:
        with engine.begin() as conn:
            cfg = Config()
            cfg.set_main_option("script_location", str(MIGRATIONS))
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0005")
            assert "run_results" not in inspect(conn).get_table_names()
            command.upgrade(cfg, "head")
            assert "run_results" in inspect(conn).get_table_names()
    finally:
        engine.dispose()
