"""Several gpurack processes on one inventory at once, on SQLite and on a real PostgreSQL: nothing is lost.

Real processes (forked, see process_helpers), released together, so their writes overlap.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gpurack.inventory import LinkRecord, NodeRecord, RunRecord, open_store
from pg_helpers import BACKENDS, backend_url
from process_helpers import together
from sqlalchemy import text

PROCESSES = 4
RECORDS = 100
LINK_RUNS = 25


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


def _record_links(index: int, url: str) -> None:
    """LINK_RUNS fabric runs; run i sees host node-i (new, seen by every process at about the same
    moment) and the host every run sees, each NIC on a port of this process's leaf."""
    with open_store(url) as store:
        for i in range(LINK_RUNS):
            nics = [LinkRecord(f"mlx5_{n}", f"leaf{index}", f"Ethernet1/{n + 1}", None) for n in range(8)]
            store.record_links(
                RunRecord("fabric", source=f"process-{index}"), {f"node-{i:03d}": nics, "every-run": nics}
            )


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


def test_four_processes_recording_fabric_runs_of_the_same_new_hosts_lose_no_link(db_url: str) -> None:
    open_store(db_url).close()
    assert together(_record_links, PROCESSES, db_url) == []
    with open_store(db_url) as store:
        with store.database.engine.connect() as conn:
            runs = conn.execute(text("SELECT count(*) FROM runs WHERE kind = 'fabric'")).scalar()
            links = conn.execute(text("SELECT count(*) FROM switch_links")).scalar()
        assert (runs, links) == (PROCESSES * LINK_RUNS, PROCESSES * LINK_RUNS * 2 * 8)
        assert len(store.list_nodes()) == LINK_RUNS + 1
        comparison = store.compare("every-run")
        assert comparison.to_fabric_run == PROCESSES * LINK_RUNS


def test_four_processes_opening_a_fresh_database_at_once_all_succeed(db_url: str) -> None:
    # The old SQLite migration ran its DDL outside a transaction: the second process failed
    # with "table alembic_version already exists".
    assert together(_open, PROCESSES, db_url) == []
    with open_store(db_url) as store:
        assert store.list_nodes() == []
