"""Property (issue #32, class 6): any value stored in any column of a recorded SQLite inventory
(text, bytes, numbers, JSON of any shape, as another tool or a lost page leaves them) makes
`inventory show`, `history` and `report` print their result or one line naming the table, the
row and the field with exit 2; never a traceback."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from gpurack.cli import main
from gpurack.db import Base
from gpurack.errors import ExitCode
from gpurack.inventory import NodeRecord, RunRecord, open_store
from hypothesis import given, settings
from hypothesis import strategies as st

from .fuzz_inputs import COUNTS

HOST = "gpu01"
FACTS = {
    "gpurack_gpu": {"count": 1, "gpus": [{"index": 0, "uuid": "GPU-1", "serial": "1", "name": "H200",
                                          "memory_total_mib": 143771, "pcie": {"gen_current": 5}}]},
    "gpurack_os": {"kernel": "6.8.0", "driver_version": "570.1"},
}  # fmt: skip
RESULT = {"id": "gpu.count", "verdict": "pass", "component": "gpu", "measured": 1, "expected": 1}
# Every column but the keys that join the rows (a damaged key is a row that belongs nowhere) and
# the host's name (another name is another host: `unknown host`, exit 64).
COLUMNS = sorted(
    (table.name, column.name)
    for table in Base.metadata.sorted_tables
    for column in table.columns
    if not column.primary_key and not column.foreign_keys and (table.name, column.name) != ("nodes", "host")
)
STORED = st.one_of(
    st.text(max_size=20),
    st.binary(max_size=8),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.sampled_from(["{", "[1]", '{"a": {"b": 1}}', '"text"', "null", "2026-13-45 00:00:00", "maybe"]),
    st.builds(json.dumps, st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                                       lambda inner: st.lists(inner, max_size=3)
                                       | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                                       max_leaves=6)),
)  # fmt: skip


@pytest.fixture(scope="module")
def recorded() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "base.db"
        with open_store(f"sqlite:///{path}") as store:
            for day in (1, 2):
                store.record(
                    RunRecord("validate", started=datetime(2026, 11, day, tzinfo=UTC)),
                    [NodeRecord(HOST, "h200", "ansible", FACTS, results=[RESULT])],
                )
        yield path


# Each example opens a database three times: a quarter of the profile's count keeps it to seconds.
@settings(max_examples=max(settings.default.max_examples // 4, 10))
@given(column=st.sampled_from(COLUMNS), value=STORED)
def test_any_stored_value_is_read_or_named(recorded: Path, column: tuple[str, str], value: object) -> None:
    table, field = column
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "inventory.db"
        shutil.copy(recorded, db)
        with sqlite3.connect(db) as conn:
            try:
                conn.execute(f"UPDATE {table} SET {field} = ?", (value,))
            except sqlite3.IntegrityError:
                return  # the schema refuses it (NOT NULL, UNIQUE)
        for argv in (["inventory", "show", HOST], ["inventory", "history", HOST], ["report", "2"]):
            out, err = io.StringIO(), io.StringIO()
            extra = ["--output", str(Path(folder) / "report")] if argv[0] == "report" else []
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main([*argv, *extra, "--db", f"sqlite:///{db}"])
            COUNTS.setdefault("damaged row", Counter())["parsed" if code == ExitCode.OK else "refused"] += 1
            assert code in (ExitCode.OK, ExitCode.NOT_ASSESSED), err.getvalue()
            if code == ExitCode.NOT_ASSESSED:
                (line,) = err.getvalue().splitlines()
                assert line.startswith(f"gpurack: inventory database is damaged: table {table}, row ")
                assert f", field {field}: " in line
