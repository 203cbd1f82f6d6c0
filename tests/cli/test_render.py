"""What the operator sees: literal text (no rich markup surprises), failures first, one-line errors."""

from __future__ import annotations

from typing import Any

import pytest
from gpurack import render
from gpurack.errors import UsageError
from gpurack.runner import TaskEvent

RESULTS: list[dict[str, Any]] = [
    {"id": "a", "title": "Alpha", "verdict": "pass", "component": "node", "measured": 1, "expected": 1},
    {
        "id": "b",
        "title": "Beta",
        "verdict": "fail",
        "component": "GPU 0",
        "measured": "[N/A]",
        "expected": 8,
        "reason": "saw [/x] brackets",
        "remediation": "reseat [GPU]",
    },
    {"id": "c", "title": "Gamma", "verdict": "skip", "component": "node", "reason": "not set"},
]
SUMMARY = {"pass": 1, "warn": 0, "fail": 1, "skip": 1, "verdict": "fail"}


def test_results_table_prints_brackets_literally(capsys: pytest.CaptureFixture[str]) -> None:
    render.results_table("n1", RESULTS, SUMMARY)
    out = capsys.readouterr().out
    assert "[N/A]" in out
    assert "saw [/x] brackets" in out
    assert "fix: reseat [GPU]" in out


def test_results_table_lists_failures_before_passes(capsys: pytest.CaptureFixture[str]) -> None:
    render.results_table("n1", RESULTS, SUMMARY)
    out = capsys.readouterr().out
    assert out.index("Beta") < out.index("Alpha")
    assert "skipped (1):" in out
    assert "verdict: fail (pass 1, warn 0, fail 1, skip 1)" in out


def test_results_markdown_escapes_pipes_and_orders_failures_first() -> None:
    text = render.results_markdown("n1", [*RESULTS, {"title": "a|b", "verdict": "warn"}], SUMMARY)
    rows = [line for line in text.splitlines() if line.startswith("| ")][1:]
    # The result model's one verdict order (module_utils/results/model.py VERDICT_ORDER).
    assert [row.split(" | ")[0] for row in rows] == ["| fail", "| warn", "| pass", "| skip"]
    assert "a\\|b" in text


def test_task_event_prints_ansible_message_literally(capsys: pytest.CaptureFixture[str]) -> None:
    render.task_event(TaskEvent("unreachable", "Ping", "gpu01", "[Errno 111] refused"))
    assert "gpu01: [Errno 111] refused" in capsys.readouterr().out


def test_error_prints_one_line_then_details_and_returns_code(capsys: pytest.CaptureFixture[str]) -> None:
    code = render.error(UsageError("bad expect", details=("gpurack_expect.x: unknown key",)))
    assert code == 64
    assert capsys.readouterr().err == "gpurack: bad expect\n  - gpurack_expect.x: unknown key\n"


def test_status_log_lines_carry_no_file_and_line_of_ours(capsys: pytest.CaptureFixture[str]) -> None:
    with render.status("standard tier on n1") as say:
        say("measuring HBM bandwidth")
    err = capsys.readouterr().err
    line = next(line for line in err.splitlines() if "measuring HBM bandwidth" in line)
    assert ".py:" not in line
    assert line.rstrip().endswith("measuring HBM bandwidth")


def test_one_verdict_style_table_keyed_by_verdict() -> None:
    from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import Verdict

    assert set(render.VERDICT_STYLE) == set(Verdict)
    assert render.verdict_text("fail").style == render.VERDICT_STYLE[Verdict.FAIL]
    assert str(render.verdict_text(None)) == "-"
