"""A damaged inventory database row (issue #32, class 6): every reader names the table, the row
and the field and exits 2, never 70; a listing still shows the rows it could read.

The rows are damaged with raw SQL, as another tool, a hand edit or a lost page would leave them.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from gpurack.cli import main
from gpurack.errors import ExitCode, NotAssessedError
from gpurack.inventory import AcceptanceRecord, NodeRecord, RunRecord, open_store
from inventory_helpers import hgx_facts, result
from pg_helpers import BACKENDS, backend_url
from sqlalchemy import create_engine, text

T0 = datetime(2026, 11, 1, 12, tzinfo=UTC)
HOST = "gpu01"
LATEST_RUN = 3
ACCEPT_RUN = 4


def _acceptance() -> AcceptanceRecord:
    return AcceptanceRecord(
        name="accept-1", team="alpha", queue="alpha", pool="h200", pods=2, gpus=2,
        started=T0 + timedelta(days=3), finished=T0 + timedelta(days=3, hours=1), outcome="accepted",
        units=960.0, verdict="pass", results=({"id": "accept.queue", "verdict": "pass"},),
        queue_wait_s=4.0, cost_total=0.2, cost_per_unit=0.2 / 960, currency="EUR",
    )  # fmt: skip


def _fill(url: str) -> None:
    """Three validate runs of gpu01 and gpu02 (with a check each), then one acceptance run."""
    with open_store(url) as store:
        for day in range(LATEST_RUN):
            store.record(
                RunRecord("validate", started=T0 + timedelta(days=day)),
                [
                    NodeRecord(HOST, "h200", "ansible", hgx_facts(), results=[result("gpu.pcie", "pass")]),
                    NodeRecord("gpu02", "h200", "ansible", hgx_facts(), results=[result("gpu.pcie", "warn")]),
                ],
            )  # fmt: skip
        store.record_acceptance(
            RunRecord(kind="accept", source="inventory:lab", started=_acceptance().started), _acceptance()
        )


@pytest.fixture(scope="module")
def base_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("damage") / "base.db"
    _fill(f"sqlite:///{path}")
    return path


@pytest.fixture
def db(base_db: Path, tmp_path: Path) -> Path:
    path = tmp_path / "inventory.db"
    shutil.copy(base_db, path)
    return path


# The rows of gpu01's latest snapshot (run 3), by table: what `show`, `report 3` and the rest read.
_LATEST = (
    "(SELECT s.id FROM snapshots s JOIN nodes n ON n.id = s.node_id"
    f" WHERE n.host = '{HOST}' AND s.run_id = {LATEST_RUN})"
)
WHERE = {
    "nodes": f"host = '{HOST}'",
    "runs": f"id = {LATEST_RUN}",
    "snapshots": f"id = {_LATEST}",
    "check_results": f"snapshot_id = {_LATEST}",
    "gpus": f"snapshot_id = {_LATEST}",
    "nics": f"snapshot_id = {_LATEST}",
    "disks": f"snapshot_id = {_LATEST}",
    "acceptance_runs": f"run_id = {ACCEPT_RUN}",
    "acceptance_steps": f"acceptance_run_id = (SELECT id FROM acceptance_runs WHERE run_id = {ACCEPT_RUN})",
}

# (table, field, the value as SQL, what the message says about it)
DAMAGE = [
    ("snapshots", "facts", "'{not json'", "cannot be read"),
    ("snapshots", "facts", "'[1, 2]'", "not a mapping of facts"),
    ("snapshots", "labels", "'{not json'", "cannot be read"),
    ("snapshots", "labels", "'[\"a\", 1]'", "not a mapping of label names to text"),
    ("snapshots", "labels", '\'{"a": {"b": 1}}\'', "not a mapping of label names to text"),
    ("snapshots", "verdict", "'maybe'", "not one of pass, warn, fail, skip"),
    ("snapshots", "kernel", "x'00ff'", "not text"),
    ("snapshots", "driver", "x'41'", "not text"),
    ("runs", "started", "'yesterday'", "cannot be read"),
    ("runs", "started", "'2026-13-45 00:00:00'", "cannot be read"),
    ("runs", "finished", "'later'", "cannot be read"),
    ("runs", "kind", "x'ff'", "not text"),
    ("nodes", "first_seen", "'soon'", "cannot be read"),
    ("nodes", "last_seen", "1234", "cannot be read"),
    ("nodes", "pool", "x'ff'", "not text"),
    ("check_results", "verdict", "'maybe'", "not one of pass, warn, fail, skip"),
    ("check_results", "measured", "'{x'", "cannot be read"),
    ("check_results", "evidence", "'[1'", "cannot be read"),
    ("gpus", "memory_mib", "'lots'", "not a whole number"),
    ("gpus", "pcie_gen_max", "2.5", "not a whole number"),
    ("nics", "rate_gbps", "'fast'", "not a number"),
    ("disks", "size_bytes", "'big'", "not a whole number"),
]
DAMAGE_IDS = [f"{t}.{f}={v}" for t, f, v, _ in DAMAGE]

READERS = {
    "list": ("inventory", "list"),
    "show": ("inventory", "show", HOST),
    "show-json": ("inventory", "show", HOST, "--json"),
    "history": ("inventory", "history", HOST),
    "diff": ("inventory", "diff", HOST),
    "diff-all": ("inventory", "diff", "--all"),
    "outliers": ("inventory", "outliers"),
    "export-csv": ("inventory", "export", "--format", "csv"),
    "export-json": ("inventory", "export", "--format", "json"),
    "report": ("report", str(LATEST_RUN), "--force", "--output"),
}
# The readers that read every field of the latest snapshot: each must find any damage in it.
READ_ALL = ("show", "show-json", "outliers", "report")


def _damage(path: Path, table: str, field: str, value: str) -> int:
    """Set `field` of the rows WHERE[table] to `value`; return the first such row's id."""
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE {table} SET {field} = {value} WHERE {WHERE[table]}")
        (row,) = conn.execute(f"SELECT min(id) FROM {table} WHERE {WHERE[table]}").fetchone()
    return int(row)


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, db: Path, reader: str) -> tuple[int, str, str]:
    argv = [*READERS[reader]]
    if reader == "report":
        argv.append(str(tmp_path / "report"))
    code = main([*argv, "--db", f"sqlite:///{db}"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("damage", DAMAGE, ids=DAMAGE_IDS)
def test_a_damaged_row_is_named_with_exit_2_never_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db: Path, reader: str, damage: tuple[str, ...]
) -> None:
    table, field, value, says = damage
    row = _damage(db, table, field, value)
    code, _, err = _run(capsys, tmp_path, db, reader)
    if code == ExitCode.OK and reader not in READ_ALL:
        assert err == ""  # this reader does not read that field
        return
    assert code == ExitCode.NOT_ASSESSED, err
    assert "Traceback" not in err
    (line,) = err.splitlines()
    assert line.startswith(f"gpurack: inventory database is damaged: table {table}, row ")
    assert f", field {field}: " in line and says in line
    if reader in READ_ALL or table not in ("snapshots", "nodes"):
        assert f"table {table}, row {row}, field {field}: " in line


def test_history_lists_the_rows_it_could_read_then_names_the_damaged_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db: Path
) -> None:
    _damage(db, "runs", "started", "'yesterday'")  # run 3 only
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET started = 'noon' WHERE id = 2")
    code = main(["inventory", "history", HOST, "--json", "--db", f"sqlite:///{db}"])
    out, err = capsys.readouterr()
    assert code == ExitCode.NOT_ASSESSED
    assert [run["run_id"] for run in json.loads(out)["runs"]] == [1]
    assert err.splitlines() == [
        "gpurack: inventory database is damaged: table runs, row 2, field started: cannot be read "
        "('noon': Invalid isoformat string: 'noon') (and 1 more damaged row(s))"
    ]
    code, out, err = _run(capsys, tmp_path, db, "history")
    assert code == ExitCode.NOT_ASSESSED and "Traceback" not in err
    assert out.startswith(f"{HOST}: 1 snapshot") and len(err.splitlines()) == 1


def test_list_shows_the_other_nodes_then_names_the_damaged_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db: Path
) -> None:
    row = _damage(db, "nodes", "first_seen", "'soon'")
    code = main(["inventory", "list", "--json", "--db", f"sqlite:///{db}"])
    out, err = capsys.readouterr()
    assert code == ExitCode.NOT_ASSESSED
    assert [node["host"] for node in json.loads(out)] == ["gpu02"]
    (line,) = err.splitlines()
    assert line.startswith(
        f"gpurack: inventory database is damaged: table nodes, row {row}, field first_seen: "
    )
    code, out, err = _run(capsys, tmp_path, db, "list")
    assert code == ExitCode.NOT_ASSESSED and "gpu02" in out and HOST not in out


def test_export_writes_nothing_when_a_row_is_damaged(tmp_path: Path, db: Path) -> None:
    """A file without the damaged host would read as a whole export: none is written."""
    _damage(db, "snapshots", "labels", "'[1]'")
    target = tmp_path / "nodes.csv"
    code = main(["inventory", "export", "--format", "csv", "-o", str(target), "--db", f"sqlite:///{db}"])
    assert code == ExitCode.NOT_ASSESSED and not target.exists()


@pytest.mark.parametrize(
    "damage",
    [
        ("acceptance_runs", "verdict", "'maybe'", "not one of"),
        ("acceptance_runs", "started", "'dawn'", "cannot be read"),
        ("acceptance_runs", "gpus", "'two'", "not a whole number"),
        ("acceptance_runs", "units", "'many'", "not a number"),
        ("acceptance_steps", "result", "'{x'", "cannot be read"),
        ("acceptance_steps", "result", "'[1]'", "not a mapping"),
        ("acceptance_steps", "verdict", "'maybe'", "not one of"),
    ],
)
def test_a_damaged_acceptance_row_stops_the_cost_and_the_report_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db: Path, damage: tuple[str, ...]
) -> None:
    table, field, value, says = damage
    row = _damage(db, table, field, value)
    with open_store(f"sqlite:///{db}", create=False) as store, pytest.raises(NotAssessedError) as caught:
        store.acceptance_runs()
    assert caught.value.message.startswith(
        f"inventory database is damaged: table {table}, row {row}, field {field}: "
    )
    assert says in caught.value.message
    code = main(["report", str(ACCEPT_RUN), "--output", str(tmp_path / "r"), "--db", f"sqlite:///{db}"])
    (line,) = capsys.readouterr().err.splitlines()
    assert code == ExitCode.NOT_ASSESSED and f"table {table}, row {row}, field {field}: " in line


@pytest.fixture(params=BACKENDS)
def any_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    url = backend_url(request.param, tmp_path)
    _fill(url)
    yield url


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("labels", "'[\"a\", 1]'", "not a mapping of label names to text"),
        ("labels", "'{\"a\": 1}'", "not a mapping of label names to text"),
        ("facts", "'\"a string\"'", "not a mapping of facts"),
        ("verdict", "'maybe'", "not one of pass, warn, fail, skip"),
    ],
)
def test_damage_that_postgresql_can_hold_is_named_there_too(
    capsys: pytest.CaptureFixture[str], any_db: str, field: str, value: str, says: str
) -> None:
    """JSONB and timestamps refuse text that is not one; a wrong shape or verdict still gets in."""
    engine = create_engine(any_db.replace("postgresql://", "postgresql+psycopg://", 1))
    cast = "::jsonb" if field in ("labels", "facts") and any_db.startswith("postgresql") else ""
    with engine.begin() as conn:
        conn.execute(text(f"UPDATE snapshots SET {field} = {value}{cast} WHERE {WHERE['snapshots']}"))
    engine.dispose()
    code = main(["inventory", "show", HOST, "--db", any_db])
    (line,) = capsys.readouterr().err.splitlines()
    assert code == ExitCode.NOT_ASSESSED
    assert "table snapshots, row " in line and f"field {field}: " in line and says in line
