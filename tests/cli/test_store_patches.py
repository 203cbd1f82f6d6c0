"""A patch run's outcomes in the inventory DB, on SQLite and on a real PostgreSQL server: one row
per node and run, beside the run's snapshots, read back with the run; migration 0005."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from gpurack.db import MIGRATIONS, database_url, head_revision
from gpurack.errors import UsageError
from gpurack.inventory import NodeRecord, PatchRecord, RunRecord, Store, open_store
from inventory_helpers import hgx_facts
from pg_helpers import BACKENDS, backend_url
from sqlalchemy import Connection, create_engine, inspect, text

PATCHED = PatchRecord(
    host="gpu01", outcome="patched", node="lab-w1", drain_s=12.3, update_s=40.1, reboot_s=35.0,
    validation_s=20.2, kernel_before="6.1.0-41-amd64", kernel_after="6.1.0-42-amd64",
    driver_before="580.95.05", driver_after="580.105.08", rebooted=True, validation="pass",
    maintenance_run="awx-1234",
)  # fmt: skip
# What a host whose fact could not be read leaves: the host, nothing else.
UNREADABLE = PatchRecord(host="gpu03", outcome=None)


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return backend_url(request.param, tmp_path)


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with open_store(db_url) as opened:
        yield opened


def _patch_run(store: Store, *patches: PatchRecord, nodes: tuple[NodeRecord, ...] = ()) -> int:
    return store.record(RunRecord(kind="run", playbook="patch.yml"), list(nodes), list(patches))


def test_a_patch_run_keeps_each_nodes_outcome(store: Store) -> None:
    held = PatchRecord(host="gpu02", outcome="held", reason="validation failed: gpu.count", rebooted=False)
    long_text = "x" * 5000  # what a host reports is kept whole, on PostgreSQL too
    odd = PatchRecord(host="gpu04", outcome="refused", reason=long_text, kernel_before=long_text)
    run_id = _patch_run(store, held, PATCHED, UNREADABLE, odd)
    view = store.run(run_id)
    assert view.patches == (PATCHED, held, UNREADABLE, odd)  # by host name
    assert view.nodes == ()
    assert store.hosts() == ["gpu01", "gpu02", "gpu03", "gpu04"]


def test_a_patch_run_keeps_snapshots_and_outcomes_together(store: Store) -> None:
    node = NodeRecord("gpu01", "h200", "ansible", hgx_facts(), k8s_node_name="lab-w1")
    run_id = _patch_run(store, PATCHED, UNREADABLE, nodes=(node,))
    view = store.run(run_id)
    assert [n.host for n in view.nodes] == ["gpu01"]
    assert [p.host for p in view.patches] == ["gpu01", "gpu03"]
    (listed, _) = store.list_nodes()
    assert (listed.host, listed.pool, listed.k8s_node_name) == ("gpu01", "h200", "lab-w1")


def test_a_patch_of_a_known_host_keeps_its_pool_and_name(store: Store) -> None:
    node = NodeRecord("gpu01", "h200", "ansible", hgx_facts(), k8s_node_name="lab-w1")
    store.record(RunRecord(kind="validate"), [node])
    _patch_run(store, PATCHED)
    (listed,) = store.list_nodes()
    assert (listed.pool, listed.k8s_node_name, listed.runs) == ("h200", "lab-w1", 1)


def test_runs_without_patches_read_back_none(store: Store) -> None:
    run_id = store.record(RunRecord(kind="validate"), [NodeRecord("gpu01", "h200", "local", hgx_facts())])
    assert store.run(run_id).patches == ()


def test_a_host_patched_twice_in_one_run_is_refused(store: Store) -> None:
    with pytest.raises(UsageError, match="host patched twice: gpu01"):
        _patch_run(store, PATCHED, PATCHED)
    assert store.hosts() == []


def test_deleting_a_patch_run_deletes_its_outcomes(store: Store) -> None:
    run_id = _patch_run(store, PATCHED)
    with store.database.engine.begin() as conn:
        conn.execute(text("DELETE FROM runs WHERE id = :id"), {"id": run_id})
        assert conn.execute(text("SELECT count(*) FROM node_patches")).scalar() == 0


def test_migration_0005_adds_and_removes_the_patch_table(db_url: str) -> None:
    with open_store(db_url) as store:
        _patch_run(store, PATCHED)
        with store.database.engine.connect() as conn:
            assert MigrationContext.configure(conn).get_current_revision() == head_revision()
    engine = create_engine(database_url(db_url))
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic(conn), "0004")
            assert "node_patches" not in inspect(conn).get_table_names()
            assert conn.execute(text("SELECT count(*) FROM runs")).scalar() == 1
            command.upgrade(_alembic(conn), "head")
    finally:
        engine.dispose()
    with open_store(db_url) as store:
        assert store.run().patches == ()


def _alembic(conn: Connection) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["connection"] = conn
    return cfg
