"""Text from captures, the database and inventories on a terminal, in CSV and in one-line errors.

A value reaches the operator as it was recorded, except what a terminal or a spreadsheet acts
on: an escape sequence that clears the screen or retitles the window is shown as `\\x1b...`,
a newline in an error's value cannot start a second `gpurack:` line, a CSV cell never starts
like a formula. JSON stays exact. Each medium has one place that does it (gpurack.termtext,
render.console.SafeConsole, inventory.export.csv_cell); these tests enter hostile text through
every verb that shows it.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_helpers import invoke
from gpurack.inventory import NodeRecord, RunRecord, open_store
from gpurack.inventory.export import csv_cell
from gpurack.termtext import one_line, printable
from hypothesis import given
from hypothesis import strategies as st
from inventory_helpers import hgx_facts

# Clear the screen, set the window title, a C1 CSI, a right-to-left override, a bell.
HOSTILE = "6.8\x1b[2J\x1b]0;owned\x07\x9b31m\u202eevil"
FORMULA = '=HYPERLINK("https://evil.example","x")'
# What no terminal output of gpurack may contain once data went through it.
_ACTED_ON = [chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))] + [
    "\u202e",
    "\u2066",
]


def _acted_on(text: str) -> list[str]:
    return sorted({repr(c) for c in text if c in _ACTED_ON})


def _strings(doc: object) -> list[str]:
    """Every string value in a JSON document."""
    if isinstance(doc, dict):
        return [s for item in doc.values() for s in _strings(item)]
    if isinstance(doc, list):
        return [s for item in doc for s in _strings(item)]
    return [doc] if isinstance(doc, str) else []


def _record(url: str, kernel: str, label: str) -> None:
    facts = hgx_facts()
    facts["gpurack_os"]["kernel"] = kernel
    labels = {"gpurack.io/note": label}
    node = NodeRecord("node-a", "pool-a", "serial-1", facts, labels, [], k8s_node_name="node-a")
    started = datetime(2026, 12, 1, 9, tzinfo=UTC)
    with open_store(url) as store:
        run = RunRecord("validate", source="lab", playbook="site.yml", started=started)
        store.record(run, [node])


@pytest.fixture
def hostile_db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'inventory.db'}"
    _record(url, HOSTILE, HOSTILE)
    return url


@pytest.mark.parametrize(
    "argv",
    [
        ("inventory", "show", "node-a"),
        ("inventory", "list"),
        ("inventory", "history", "node-a"),
    ],
    ids=" ".join,
)
def test_database_text_on_the_terminal_is_shown_escaped(
    capsys: pytest.CaptureFixture[str], hostile_db: str, argv: tuple[str, ...]
) -> None:
    result = invoke(capsys, *argv, "--db", hostile_db)
    assert result.code == 0, result.err
    assert _acted_on(result.out + result.err) == []
    if argv[1] == "show":
        # rich drops BEL, BS, VT, FF and CR itself; the rest is shown escaped.
        assert "6.8\\x1b[2J\\x1b]0;owned\\x9b31m\\u202eevil" in result.out


def test_captured_kernel_string_is_shown_escaped_by_facts(
    capsys: pytest.CaptureFixture[str], h200x1: Path, writable_capture: Callable[[Path, str], Path]
) -> None:
    capture = writable_capture(h200x1, "hostile")
    uname = capture / "uname.txt"
    uname.write_text(uname.read_text().replace("6.", "6.\x1b[2J\x1b]0;owned\x07", 1))
    result = invoke(capsys, "facts", "--from-capture", capture)
    assert result.code == 0, result.err
    assert _acted_on(result.out) == []
    assert "\\x1b[2J\\x1b]0;owned" in result.out


def test_json_output_keeps_the_hostile_text_exact(
    capsys: pytest.CaptureFixture[str], hostile_db: str
) -> None:
    result = invoke(capsys, "inventory", "show", "node-a", "--db", hostile_db, "--json")
    assert result.code == 0, result.err
    assert HOSTILE in _strings(json.loads(result.out))


def test_csv_export_neutralises_formulas_and_json_export_does_not(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'inventory.db'}"
    _record(url, FORMULA, "x")
    result = invoke(capsys, "inventory", "export", "--format", "csv", "--db", url)
    assert result.code == 0, result.err
    (row,) = csv.DictReader(io.StringIO(result.out))
    assert row["kernel"] == "'" + FORMULA
    assert row["gpu_count"] == "8"  # a number is never prefixed
    exported = invoke(capsys, "inventory", "export", "--format", "json", "--db", url)
    assert json.loads(exported.out)["nodes"][0]["latest"]["kernel"] == FORMULA


def test_an_error_naming_a_value_with_newlines_stays_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'inventory.db'}"
    _record(url, "6.8", "x")
    result = invoke(capsys, "inventory", "show", "nobody\ngpurack: all nodes passed\x1b[2J", "--db", url)
    assert result.code != 0
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("gpurack: ")
    assert "\\ngpurack: all nodes passed\\x1b[2J" in lines[0]


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_every_formula_start_is_neutralised(start: str) -> None:
    assert csv_cell(f"{start}1+1") == f"'{start}1+1"


@given(st.text())
def test_printable_leaves_nothing_a_terminal_acts_on_but_lines_and_tabs(text: str) -> None:
    shown = printable(text)
    assert [c for c in shown if c in _ACTED_ON and c not in "\n\t"] == []
    assert shown.count("\n") == text.count("\n")


@given(st.text())
def test_one_line_is_one_line_and_keeps_plain_text(text: str) -> None:
    shown = one_line(text)
    assert len(shown.splitlines()) <= 1
    assert _acted_on(shown) == []
    if text.isprintable():
        assert shown == text


@given(st.one_of(st.text(), st.integers(), st.floats(allow_nan=False)))
def test_no_csv_cell_starts_like_a_formula(cell: object) -> None:
    out = csv_cell(cell)
    if isinstance(cell, str):
        assert not out.startswith(("=", "+", "-", "@", "\t", "\r"))
        assert out.removeprefix("'") == cell or out == cell
    else:
        assert out == cell
