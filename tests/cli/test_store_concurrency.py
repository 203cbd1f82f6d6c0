"""Several gpurack processes on one inventory at once, on SQLite and on a real PostgreSQL: nothing is lost.

Real processes (forked, see process_helpers), released together, so their writes overlap.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gpurack.inventory import NodeRecord, RunRecord, open_store
from pg_helpers import BACKENDS, backend_url
from process_helpers import together

PROCESSES = 4
RECORDS = 100


def _record_runs(index: int, url: str) -> None:
    """RECORDS runs; run i sees host node-i (new, recorded by every process at about the same
    moment) and the host every run sees."""
    with open_store(url) as store:
        for i in range(RECORDS):
            nodes = [
                NodeRecord(f"node-{i:03d}", "h200", "local", {}),
                NodeRecord("every-run", None, "local", {}),
            ]
            store.record(RunRecord("validate", source=f"process-{index}"), nodes)


def _open(_index: int, url: str) -> None:
    open_store(url).close()


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return backend_url(request.param, tmp_path)


def test_four_processes_recording_the_same_new_hosts_lose_no_record(db_url: str) -> None:
    open_store(db_url).close()  # migrated: this test is about the records (the next one, the schema)
    assert together(_record_runs, PROCESSES, db_url) == []
    with open_store(db_url) as store:
        nodes = {n.host: n for n in store.list_nodes()}
        assert len(store.history("every-run")) == PROCESSES * RECORDS
        assert store.run().run_id == PROCESSES * RECORDS
    assert len(nodes) == RECORDS + 1
    assert {n.runs for host, n in nodes.items() if host != "every-run"} == {PROCESSES}
    assert {n.pool for host, n in nodes.items() if host != "every-run"} == {"h200"}


def test_four_processes_opening_a_fresh_database_at_once_all_succeed(db_url: str) -> None:
    # The old SQLite migration ran its DDL outside a transaction: the second process failed
    # with "table alembic_version already exists".
    assert together(_open, PROCESSES, db_url) == []
    with open_store(db_url) as store:
        assert store.list_nodes() == []
