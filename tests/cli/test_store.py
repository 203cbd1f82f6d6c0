"""The inventory database on SQLite and on a real PostgreSQL server: record, query, diff, migrate."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from gpurack.db import Base, connect, database_url, head_revision, mask
from gpurack.errors import ExitCode, GpurackError, NotAssessedError, UsageError
from gpurack.hoststate import state_from_facts
from gpurack.inventory import NodeRecord, RunRecord, Store, open_store
from inventory_helpers import capture_facts, hgx_facts, result
from pg_helpers import BACKENDS, backend_url, shared_server
from sqlalchemy import text


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return backend_url(request.param, tmp_path)


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with open_store(db_url) as opened:
        yield opened


def _node(host: str = "gpu01", facts: dict[str, object] | None = None, **kw: object) -> NodeRecord:
    return NodeRecord(host=host, pool="h200", source="local", facts=facts or hgx_facts(), **kw)  # type: ignore[arg-type]


def _run(day: int) -> RunRecord:
    return RunRecord(kind="validate", started=datetime(2026, 11, day, 12, 0, tzinfo=UTC))


def test_record_then_list_nodes_shows_latest_snapshot(store: Store) -> None:
    first = store.record(_run(1), [_node("gpu01", results=[result("gpu.count", "pass")]), _node("gpu02")])
    second = store.record(_run(2), [_node("gpu01", results=[result("gpu.count", "fail")])])
    assert second > first
    nodes = {n.host: n for n in store.list_nodes()}
    assert list(nodes) == ["gpu01", "gpu02"]
    gpu01 = nodes["gpu01"]
    assert (gpu01.runs, gpu01.last_run, gpu01.verdict, gpu01.gpus, gpu01.gpu_model) == (
        2,
        second,
        "fail",
        8,
        "NVIDIA H200",
    )
    assert gpu01.first_seen == datetime(2026, 11, 1, 12, tzinfo=UTC)
    assert gpu01.last_seen == datetime(2026, 11, 2, 12, tzinfo=UTC)
    assert (nodes["gpu02"].runs, nodes["gpu02"].verdict, nodes["gpu02"].driver) == (1, None, "580.159.04")


def test_snapshot_round_trips_facts_labels_results_and_rows(store: Store) -> None:
    facts = hgx_facts()
    results = [result("gpu.pcie", "warn", "gpu5", reason="Gen4")]
    run_id = store.record(_run(1), [_node(facts=facts, labels={"gpurack.io/pool": "h200"}, results=results)])
    view = store.snapshot("gpu01")
    assert (view.run_id, view.run_kind, view.source, view.verdict, view.pool) == (
        run_id,
        "validate",
        "local",
        "warn",
        "h200",
    )
    assert view.facts == json.loads(json.dumps(facts))
    assert view.labels == {"gpurack.io/pool": "h200"}
    assert view.results == ({**results[0], "percent": None},)  # a check without a limit has no share
    assert view.state == state_from_facts(facts, results, {"gpurack.io/pool": "h200"})
    assert view.started == datetime(2026, 11, 1, 12, tzinfo=UTC)


def test_run_returns_every_host_of_that_run_with_percent(store: Store) -> None:
    measured = {**result("gpu.h2d_bandwidth", "pass", "GPU 0"), "measured": 55.386, "percent": 87.9}
    first = store.record(_run(1), [_node("gpu02", results=[measured]), _node("gpu01")])
    store.record(_run(2), [_node("gpu01")])
    view = store.run(first)
    assert (view.run_id, view.kind, [n.host for n in view.nodes]) == (first, "validate", ["gpu01", "gpu02"])
    assert view.nodes[1].results[0]["percent"] == 87.9 and len(view.nodes[1].state.gpus) == 8
    assert [n.host for n in store.run().nodes] == ["gpu01"]  # latest


@pytest.mark.parametrize("run_id", [None, 5])
def test_run_unknown_or_none_recorded_raises_usage_error(store: Store, run_id: int | None) -> None:
    if run_id is not None:
        store.record(_run(1), [_node()])
    with pytest.raises(UsageError, match="no runs recorded yet" if run_id is None else "unknown run 5"):
        store.run(run_id)


def test_history_lists_runs_oldest_first(store: Store) -> None:
    ids = [store.record(_run(day), [_node()]) for day in (1, 2, 3)]
    history = store.history("gpu01")
    assert [h.run_id for h in history] == ids
    assert {(h.kind, h.gpus, h.driver, h.kernel) for h in history} == {
        ("validate", 8, "580.159.04", "6.18.44-fc-v657-gpu")
    }


def test_diff_same_facts_twice_no_drift(store: Store) -> None:
    store.record(_run(1), [_node(facts=capture_facts())])
    store.record(_run(2), [_node(facts=capture_facts())])
    assert store.diff("gpu01") == []


def test_diff_last_two_runs_swap_and_downgrade_sentences(store: Store) -> None:
    store.record(_run(1), [_node()])
    swapped = hgx_facts()
    swapped["gpurack_gpu"]["gpus"][3]["serial"] = "1654924064999"
    store.record(_run(2), [_node(facts=swapped)])
    downgraded = hgx_facts()
    downgraded["gpurack_gpu"]["gpus"][3]["serial"] = "1654924064999"
    downgraded["gpurack_gpu"]["gpus"][5]["pcie"]["width_current"] = 8
    store.record(_run(3), [_node(facts=downgraded)])
    assert [d.sentence for d in store.diff("gpu01")] == [
        "GPU 5 (0000:9b:00.0) PCIe link downgraded: Gen5 x16 -> Gen5 x8"
    ]
    assert [d.sentence for d in store.diff("gpu01", from_run=1, to_run=2)] == [
        "GPU 3 (0000:3b:00.0) was swapped: serial 1654924064280 -> 1654924064999"
    ]
    assert len(store.diff("gpu01", from_run=1)) == 2
    comparison = store.compare("gpu01", to_run=2)
    assert (comparison.from_run, comparison.to_run) == (1, 2)


def test_compare_single_snapshot_has_nothing_to_compare(store: Store) -> None:
    run_id = store.record(_run(1), [_node()])
    comparison = store.compare("gpu01")
    assert (comparison.from_run, comparison.to_run, comparison.drifts) == (None, run_id, ())


def test_diff_host_skipped_by_a_run_compares_its_own_snapshots(store: Store) -> None:
    first = store.record(_run(1), [_node("gpu01"), _node("gpu02")])
    store.record(_run(2), [_node("gpu02")])
    third = store.record(_run(3), [_node("gpu01")])
    comparison = store.compare("gpu01")
    assert (comparison.from_run, comparison.to_run) == (first, third)


def test_unknown_host_is_usage_error(store: Store) -> None:
    store.record(_run(1), [_node()])
    for call in (store.history, store.snapshot, store.diff):
        with pytest.raises(UsageError, match="unknown host 'gpu99'") as info:
            call("gpu99")
        assert info.value.code == ExitCode.USAGE


def test_unknown_run_for_host_is_usage_error(store: Store) -> None:
    store.record(_run(1), [_node()])
    with pytest.raises(UsageError, match="no snapshot in run 42"):
        store.diff("gpu01", from_run=42)
    with pytest.raises(UsageError, match="no snapshot in run 42"):
        store.snapshot("gpu01", 42)


def test_record_same_host_twice_in_one_run_is_refused(store: Store) -> None:
    with pytest.raises(UsageError, match="host listed twice: gpu01"):
        store.record(_run(1), [_node(), _node()])
    assert store.list_nodes() == []


def test_record_keeps_pool_and_k8s_name_when_later_runs_omit_them(store: Store) -> None:
    store.record(_run(1), [_node(k8s_node_name="gpu01.k8s")])
    store.record(_run(2), [NodeRecord("gpu01", None, "ansible", hgx_facts())])
    (node,) = store.list_nodes()
    assert (node.pool, node.k8s_node_name) == ("h200", "gpu01.k8s")
    store.set_k8s_node_name("gpu01", "gpu-01")
    assert store.snapshot("gpu01").k8s_node_name == "gpu-01"


def test_record_run_without_nodes_returns_its_id(store: Store) -> None:
    assert store.record(RunRecord(kind="run", playbook="site.yml", status="failed"), []) >= 1


def test_export_json_and_csv_hold_serials(store: Store) -> None:
    store.record(_run(1), [_node("gpu01"), _node("gpu02", facts=capture_facts())])
    exported = json.loads(store.export("json"))
    assert [n["host"] for n in exported["nodes"]] == ["gpu01", "gpu02"]
    assert [g["serial"] for g in exported["nodes"][1]["latest"]["gpus"]] == ["1654924064277"]
    lines = store.export("csv").splitlines()
    assert lines[0].startswith("host,pool,k8s_node_name,")
    assert "1654924064277 1654924064278" in lines[1]
    assert len(lines) == 3


def test_open_twice_schema_at_head_and_matches_models(db_url: str) -> None:
    open_store(db_url).close()
    database = connect(db_url)
    try:
        with database.engine.connect() as conn:
            context = MigrationContext.configure(conn)
            assert context.get_current_revision() == head_revision()
            assert compare_metadata(context, Base.metadata) == []
    finally:
        database.close()


def test_open_database_from_newer_gpurack_is_usage_error(db_url: str) -> None:
    database = connect(db_url)
    with database.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    database.close()
    with pytest.raises(UsageError, match="revision 9999, unknown to this gpurack"):
        open_store(db_url)


@pytest.mark.postgres
def test_open_fresh_postgres_from_four_processes_at_once_migrates_once() -> None:
    url = shared_server().create_database()
    code = f"from gpurack.inventory import open_store; open_store({url!r}).close()"
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True) for _ in range(4)
    ]
    failures = [err for proc in procs if (err := proc.communicate(timeout=120)[1]) or proc.returncode]
    assert failures == []
    with open_store(url) as store:
        assert store.list_nodes() == []


def test_open_store_from_threads_at_once_migrates_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'threads.db'}"
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            open_store(url).close()
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


@pytest.mark.parametrize(
    ("url", "driver"),
    [
        ("postgresql://u@db/inv", "postgresql+psycopg"),
        ("postgres://u@db/inv", "postgresql+psycopg"),
        ("postgresql+psycopg://u@db/inv", "postgresql+psycopg"),
        ("sqlite:////var/lib/gpurack.db", "sqlite"),
        ("/var/lib/gpurack.db", "sqlite"),
    ],
)
def test_database_url_maps_schemes_to_drivers(url: str, driver: str) -> None:
    assert database_url(url).drivername == driver


def test_database_url_defaults_to_env_then_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GPURACK_DB", str(tmp_path / "env.db"))
    assert database_url(None).database == str(tmp_path / "env.db")
    monkeypatch.delenv("GPURACK_DB")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert database_url(None).database == str(tmp_path / ".local/share/gpurack/inventory.db")


@pytest.mark.parametrize(
    ("url", "error", "message"),
    [
        ("mysql://admin:hunter2@db/inv", UsageError, "unsupported database URL mysql://admin:***@db/inv"),
        (
            "postgresql://admin:hunter2@db:notaport/inv",
            UsageError,
            "cannot parse database URL postgresql://admin:***@db",
        ),
        (
            "postgresql://admin:hunter2@127.0.0.1:1/inv",
            NotAssessedError,
            "cannot open inventory database postgresql://admin:***@127.0.0.1:1/inv: connection failed",
        ),
    ],
)
def test_open_store_bad_url_one_line_password_masked(
    url: str, error: type[GpurackError], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)) as info:
        open_store(url)
    assert "hunter2" not in info.value.message
    assert "\n" not in info.value.message


def test_open_store_unwritable_sqlite_path_not_assessed(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(NotAssessedError, match="cannot create the directory"):
        open_store(str(blocker / "sub" / "inventory.db"))


def test_open_store_not_a_database_file_not_assessed(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(NotAssessedError, match="file is not a database"):
        open_store(str(junk))


# -- URLs are masked by parsing --------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://admin:hun@ter2@db/inv", "postgresql://admin:***@db/inv"),
        ("postgresql://admin:hun?ter2/x@db:5433/inv", "postgresql://admin:***@db:5433/inv"),
        ("postgresql://admin:hunter2%40x@db/inv", "postgresql://admin:***@db/inv"),
        ("postgresql://admin@db/inv?password=hunter2", "postgresql://admin@db/inv?password=***"),
        (
            "postgresql://admin@db/inv?application_name=gpurack&sslpassword=hunter2",
            "postgresql://admin@db/inv?application_name=gpurack&sslpassword=***",
        ),
        ("postgresql://admin:hun@t/er2@db/inv", "postgresql://admin:***@db/inv"),
        # Unparseable: hidden all the same.
        ("postgresql://admin:hunter2@db:port/inv", "postgresql://admin:***@db:port/inv"),
        ("sqlite://user:hunter2@/var/inv.db", "sqlite://user:***@/var/inv.db"),
        ("/var/lib/gpurack/inventory.db", "/var/lib/gpurack/inventory.db"),
    ],
)
def test_mask_hides_every_password(url: str, shown: str) -> None:
    assert mask(url) == shown
    assert "hunter2" not in mask(url) and "ter2" not in mask(url)


@pytest.mark.parametrize("password", ["p@ss?w:rd", "pa/ss@wd", "p@s/s?x#y", "p%40ss"])
def test_database_url_password_with_at_connects_with_that_password(password: str) -> None:
    parsed = database_url(f"postgresql://admin:{password}@db.example:5433/inv")
    assert (parsed.username, parsed.password, parsed.host, parsed.port, parsed.database) == (
        "admin",
        password.replace("%40", "@"),
        "db.example",
        5433,
        "inv",
    )


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sqlite://user:hunter2@/var/inv.db", "names a user or a host: a SQLite inventory is a file"),
        ("sqlite://dbhost/var/inv.db", "names a user or a host"),
        ("postgresql://admin:hunter2@db:port/inv", "cannot parse database URL"),
    ],
)
def test_open_store_refused_url_is_one_line_usage_error(url: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=re.escape(message)) as info:
        open_store(url)
    assert "hunter2" not in info.value.message and "ter2" not in info.value.message
    assert "\n" not in info.value.message


def test_open_store_unreachable_postgres_never_repeats_a_password_with_at() -> None:
    with pytest.raises(NotAssessedError) as info:
        open_store("postgresql://admin:hun@ter2@127.0.0.1:1/inv")
    assert "ter2" not in info.value.message
    assert "postgresql://admin:***@127.0.0.1:1/inv" in info.value.message


# -- every database failure is one line, exit 2 ----------------------------------------------


def test_record_value_too_large_for_the_database_is_not_assessed_and_writes_nothing(store: Store) -> None:
    facts = hgx_facts()
    facts["gpurack_gpu"]["gpus"][0]["memory_total_mib"] = 10**23
    with pytest.raises(NotAssessedError, match="cannot write to inventory database") as info:
        store.record(_run(1), [_node(facts=facts)])
    assert "\n" not in info.value.message
    assert store.list_nodes() == []


def test_query_time_failure_is_not_assessed(db_url: str) -> None:
    with open_store(db_url) as store:
        store.record(_run(1), [_node()])
        with store.database.engine.begin() as conn:
            conn.execute(text("DROP TABLE gpus"))
        for call in (store.list_nodes, lambda: store.snapshot("gpu01"), lambda: store.export("csv")):
            with pytest.raises(NotAssessedError, match=r"cannot read inventory database .*gpus") as info:
                call()
            assert "\n" not in info.value.message


def test_read_only_open_of_a_missing_sqlite_file_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state" / "inventory.db"
    for url in (str(path), f"sqlite:///{path}"):
        with pytest.raises(UsageError, match=f"no inventory database at {re.escape(str(path))}"):
            open_store(url, create=False)
    assert not (tmp_path / "state").exists()


def test_read_only_open_of_an_empty_database_creates_no_table(db_url: str) -> None:
    if db_url.startswith("sqlite"):
        Path(db_url.removeprefix("sqlite:///")).touch()
    with pytest.raises(UsageError, match="holds no inventory yet"):
        open_store(db_url, create=False)
    database = connect(db_url)  # a writer creates the schema
    database.close()
    open_store(db_url, create=False).close()


def test_bad_wait_setting_is_usage_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for value in ("soon", "-1", "nan", "inf"):
        monkeypatch.setenv("GPURACK_DB_TIMEOUT", value)
        with pytest.raises(UsageError, match="GPURACK_DB_TIMEOUT"):
            open_store(str(tmp_path / "inventory.db"))
    assert not (tmp_path / "inventory.db").exists()


def test_busy_sqlite_waits_the_timeout_then_says_busy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "inventory.db"
    open_store(str(path)).close()
    monkeypatch.setenv("GPURACK_DB_TIMEOUT", "0.3")
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another writer: readers may go on, writers wait
        with open_store(str(path)) as store:
            assert store.list_nodes() == []
            started = time.monotonic()
            with pytest.raises(NotAssessedError, match=r"is busy: .* more than 0\.3 s") as info:
                store.record(_run(1), [_node()])
            assert time.monotonic() - started >= 0.3
            assert "GPURACK_DB_TIMEOUT" in info.value.message
        holder.execute("ROLLBACK")
        holder.execute("BEGIN EXCLUSIVE")  # a writer committing: nobody may even read
        with pytest.raises(NotAssessedError, match="is busy"):
            open_store(str(path))
    finally:
        holder.close()


@pytest.mark.postgres
def test_busy_postgres_waits_lock_timeout_then_says_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    url = shared_server().create_database()
    with open_store(url) as store:
        store.record(_run(1), [_node()])
    monkeypatch.setenv("GPURACK_DB_TIMEOUT", "0.3")
    holder = connect(url)
    try:
        with holder.engine.begin() as conn:
            conn.execute(text("SELECT id FROM nodes WHERE host = 'gpu01' FOR UPDATE"))
            with open_store(url) as store, pytest.raises(NotAssessedError, match="is busy"):
                store.record(_run(2), [_node()])
    finally:
        holder.close()


def test_record_out_of_order_keeps_earliest_first_seen_and_latest_last_seen(store: Store) -> None:
    store.record(_run(2), [_node(k8s_node_name="gpu01.k8s")])
    store.record(_run(1), [NodeRecord("gpu01", "h200-new", "ansible", hgx_facts())])
    (node,) = store.list_nodes()
    assert node.first_seen == datetime(2026, 11, 1, 12, tzinfo=UTC)
    assert node.last_seen == datetime(2026, 11, 2, 12, tzinfo=UTC)
    assert (node.pool, node.k8s_node_name) == ("h200-new", "gpu01.k8s")
