"""`gpurack inventory ...` end to end: parser, handlers, output and exit codes."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from gpurack.cli import main
from gpurack.errors import ExitCode
from gpurack.inventory import NodeRecord, RunRecord, open_store
from inventory_helpers import hgx_facts, result
from pg_helpers import BACKENDS, backend_url
from sqlalchemy import text


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An inventory where gpu01 lost a GPU serial and a PCIe lane group between runs 1 and 2."""
    url = backend_url(request.param, tmp_path)
    after = hgx_facts()
    after["gpurack_gpu"]["gpus"][3]["serial"] = "1654924064999"
    after["gpurack_gpu"]["gpus"][5]["pcie"]["width_current"] = 8
    with open_store(url) as store:
        for day, facts, verdict in ((1, hgx_facts(), "pass"), (2, after, "fail")):
            store.record(
                RunRecord("validate", started=datetime(2026, 11, day, 12, tzinfo=UTC)),
                [
                    NodeRecord(
                        "gpu01", "h200", "ansible", facts, results=[result("gpu.pcie", verdict, "gpu5")]
                    ),
                    NodeRecord("gpu02", "h200", "ansible", hgx_facts()),
                ],
            )
    return url


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_inventory_diff_host_prints_one_sentence_per_change(
    capsys: pytest.CaptureFixture[str], db_url: str
) -> None:
    code, out, err = _run(capsys, "inventory", "diff", "gpu01", "--db", db_url)
    assert (code, err) == (ExitCode.OK, "")
    assert out.splitlines() == [
        "gpu01: run 1 -> run 2: 3 changes",
        "  - GPU 3 (0000:3b:00.0) was swapped: serial 1654924064280 -> 1654924064999",
        "  - GPU 5 (0000:9b:00.0) PCIe link downgraded: Gen5 x16 -> Gen5 x8",
        "  - Check gpu.pcie on gpu5: pass -> fail",
    ]


def test_inventory_diff_unchanged_host_says_no_drift(capsys: pytest.CaptureFixture[str], db_url: str) -> None:
    code, out, _ = _run(capsys, "inventory", "diff", "gpu02", "--db", db_url)
    assert (code, out) == (ExitCode.OK, "gpu02: run 1 -> run 2: no drift\n")


def test_inventory_diff_json_from_to(capsys: pytest.CaptureFixture[str], db_url: str) -> None:
    code, out, _ = _run(
        capsys, "inventory", "diff", "gpu01", "--from", "2", "--to", "1", "--json", "--db", db_url
    )
    data = json.loads(out)
    assert (code, data["from_run"], data["to_run"]) == (ExitCode.OK, 2, 1)
    assert [d["kind"] for d in data["drift"]] == ["gpu_swapped", "pcie_upgraded", "verdict_changed"]


def test_inventory_diff_all_prints_only_the_hosts_that_drifted(
    capsys: pytest.CaptureFixture[str], db_url: str
) -> None:
    code, out, err = _run(capsys, "inventory", "diff", "--all", "--db", db_url)
    assert (code, err) == (ExitCode.OK, "")
    assert out.splitlines() == [
        "gpu01: run 1 -> run 2: 3 changes",
        "  - GPU 3 (0000:3b:00.0) was swapped: serial 1654924064280 -> 1654924064999",
        "  - GPU 5 (0000:9b:00.0) PCIe link downgraded: Gen5 x16 -> Gen5 x8",
        "  - Check gpu.pcie on gpu5: pass -> fail",
        "1 of 2 hosts drifted",
    ]


def test_inventory_diff_all_json_lists_each_hosts_diff_json(
    capsys: pytest.CaptureFixture[str], db_url: str
) -> None:
    code, out, _ = _run(capsys, "inventory", "diff", "--all", "--json", "--db", db_url)
    assert code == ExitCode.OK
    each = [
        json.loads(_run(capsys, "inventory", "diff", h, "--json", "--db", db_url)[1])
        for h in ("gpu01", "gpu02")
    ]
    assert json.loads(out) == each
    assert [len(host["drift"]) for host in each] == [3, 0]


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        ((), "a HOST or --all is required"),
        (("gpu01", "--all"), "give a HOST or --all, not both"),
        (("--all", "--from", "1"), "--from and --to compare the runs of one HOST, not --all"),
        (("--all", "--to", "2"), "--from and --to compare the runs of one HOST, not --all"),
    ],
)
def test_inventory_diff_needs_exactly_one_of_host_and_all(
    capsys: pytest.CaptureFixture[str], db_url: str, argv: tuple[str, ...], problem: str
) -> None:
    code, out, err = _run(capsys, "inventory", "diff", *argv, "--db", db_url)
    assert (code, out) == (ExitCode.USAGE, "")
    assert err == f"gpurack: {problem} (see 'gpurack inventory diff --help')\n"


def test_inventory_list_show_history_text_and_json(capsys: pytest.CaptureFixture[str], db_url: str) -> None:
    code, out, _ = _run(capsys, "inventory", "list", "--db", db_url)
    assert code == ExitCode.OK
    assert "gpu01" in out and "gpu02" in out and "8x NVIDIA H200" in out
    code, out, _ = _run(capsys, "inventory", "list", "--json", "--db", db_url)
    assert [(n["host"], n["verdict"], n["runs"]) for n in json.loads(out)] == [
        ("gpu01", "fail", 2),
        ("gpu02", None, 2),
    ]
    code, out, _ = _run(capsys, "inventory", "show", "gpu01", "--db", db_url)
    assert "1654924064999" in out and "Gen5 x8 / Gen5 x16" in out and "gpu.pcie" in out
    code, out, _ = _run(capsys, "inventory", "show", "gpu01", "--run", "1", "--json", "--db", db_url)
    shown = json.loads(out)
    assert (shown["run_id"], shown["gpus"][3]["serial"]) == (1, "1654924064280")
    assert shown["facts"]["gpurack_gpu"]["driver_version"] == "580.159.04"
    code, out, _ = _run(capsys, "inventory", "history", "gpu01", "--json", "--db", db_url)
    assert [(r["run_id"], r["verdict"]) for r in json.loads(out)["runs"]] == [(1, "pass"), (2, "fail")]


def test_inventory_export_csv_to_file(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path
) -> None:
    target = tmp_path / "nodes.csv"
    code, out, _ = _run(capsys, "inventory", "export", "--format", "csv", "-o", str(target), "--db", db_url)
    assert (code, out) == (ExitCode.OK, "")
    rows = target.read_text().splitlines()
    assert len(rows) == 3 and rows[1].startswith("gpu01,h200,")


def test_inventory_export_keeps_an_existing_file_unless_force(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path
) -> None:
    target = tmp_path / "nodes.json"
    target.write_text("earlier\n")
    code, _, err = _run(capsys, "inventory", "export", "-o", str(target), "--db", db_url)
    assert code == ExitCode.USAGE
    assert err.strip().endswith(f"{target} already exists (--force replaces it)")
    assert target.read_text() == "earlier\n"
    code, _, _ = _run(capsys, "inventory", "export", "-o", str(target), "--force", "--db", db_url)
    assert code == ExitCode.OK
    assert [n["host"] for n in json.loads(target.read_text())["nodes"]] == ["gpu01", "gpu02"]


def test_inventory_uses_gpurack_db_env(
    capsys: pytest.CaptureFixture[str], db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPURACK_DB", db_url)
    code, out, _ = _run(capsys, "inventory", "export", "--format", "json")
    assert code == ExitCode.OK
    assert [n["host"] for n in json.loads(out)["nodes"]] == ["gpu01", "gpu02"]


def test_inventory_diff_unknown_host_exits_64_one_line(
    capsys: pytest.CaptureFixture[str], db_url: str
) -> None:
    code, out, err = _run(capsys, "inventory", "diff", "gpu99", "--db", db_url)
    assert (code, out) == (ExitCode.USAGE, "")
    assert err == "gpurack: unknown host 'gpu99': not in the inventory (see gpurack inventory list)\n"


def test_inventory_without_verb_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "inventory")
    assert code == ExitCode.USAGE
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("url", "code", "shown"),
    [
        (
            "mysql://admin:hunter2@db.example/inv",
            ExitCode.USAGE,
            "unsupported database URL mysql://admin:***@db.example/inv",
        ),
        (
            "postgresql://admin:hunter2@db:port/inv",
            ExitCode.USAGE,
            "cannot parse database URL postgresql://admin:***@db",
        ),
        (
            "postgresql://admin:hunter2@127.0.0.1:1/inv",
            ExitCode.NOT_ASSESSED,
            "cannot open inventory database postgresql://admin:***@127.0.0.1:1/inv: connection failed",
        ),
        (
            "postgresql://admin:hun@ter2@127.0.0.1:1/inv",
            ExitCode.NOT_ASSESSED,
            "cannot open inventory database postgresql://admin:***@127.0.0.1:1/inv: connection failed",
        ),
        (
            "postgresql://admin@127.0.0.1:1/inv?password=hunter2",
            ExitCode.NOT_ASSESSED,
            "cannot open inventory database postgresql://admin@127.0.0.1:1/inv?password=***: connection",
        ),
        (
            "sqlite://admin:hunter2@/tmp/inventory.db",
            ExitCode.USAGE,
            "SQLite database URL sqlite://admin:***@/tmp/inventory.db names a user or a host",
        ),
    ],
)
def test_inventory_bad_db_url_one_line_no_traceback(url: str, code: ExitCode, shown: str) -> None:
    # Through the real program entry point, as an operator's shell runs it.
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from gpurack.cli import main; sys.exit(main())",
            "inventory",
            "list",
            "--db",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == code
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "hunter2" not in proc.stderr + proc.stdout
    assert proc.stderr.startswith(f"gpurack: {shown}")
    assert proc.stderr.count("\n") == 1


READ_ONLY = [
    ("inventory", "list"),
    ("inventory", "show", "gpu01"),
    ("inventory", "history", "gpu01"),
    ("inventory", "diff", "gpu01"),
    ("inventory", "export", "--format", "csv"),
    ("report", "latest"),
]


@pytest.mark.parametrize("verb", READ_ONLY, ids=lambda v: "-".join(v[:2]))
def test_read_only_verb_on_missing_db_exits_64_and_creates_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, verb: tuple[str, ...]
) -> None:
    missing = tmp_path / "state" / "inventory.db"
    code, out, err = _run(capsys, *verb, "--db", str(missing))
    assert (code, out) == (ExitCode.USAGE, "")
    assert err == (
        f"gpurack: no inventory database at {missing}: nothing recorded yet (`gpurack validate` and "
        "`gpurack run` record runs; --db or $GPURACK_DB names another)\n"
    )
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize("verb", READ_ONLY[:5], ids=lambda v: "-".join(v[:2]))
def test_inventory_failure_at_query_time_exits_2_one_line(
    capsys: pytest.CaptureFixture[str], db_url: str, verb: tuple[str, ...]
) -> None:
    with open_store(db_url) as store, store.database.engine.begin() as conn:
        conn.execute(text("DROP TABLE gpus"))
    code, out, err = _run(capsys, *verb, "--db", db_url)
    assert (code, out) == (ExitCode.NOT_ASSESSED, "")
    assert err.startswith("gpurack: cannot read inventory database ") and "gpus" in err
    assert err.count("\n") == 1


def test_inventory_on_a_locked_sqlite_db_waits_then_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "inventory.db"
    open_store(str(path)).close()
    monkeypatch.setenv("GPURACK_DB_TIMEOUT", "0.2")
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        code, out, err = _run(capsys, "inventory", "list", "--db", str(path))
    finally:
        holder.close()
    assert (code, out) == (ExitCode.NOT_ASSESSED, "")
    assert err == (
        f"gpurack: inventory database sqlite:///{path} is busy: another process held its lock for more "
        "than 0.2 s (wait longer with GPURACK_DB_TIMEOUT=SECONDS)\n"
    )
