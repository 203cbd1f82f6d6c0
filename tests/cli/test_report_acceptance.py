"""`gpurack report RUN` of an accept run: its job, outcome and seven rows in report.json (valid
against the schema), report.md and report.html."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import gpurack
import jsonschema
import pytest
from cli_helpers import invoke
from gpurack.inventory import AcceptanceRecord, RunRecord, open_store

SCHEMA = Path(gpurack.__file__).parent / "data" / "report.schema.json"
T0 = datetime(2026, 12, 1, 10, tzinfo=UTC)
ROWS = (
    {"id": "accept.queue", "title": "Queued training job", "verdict": "pass", "measured": 4.0,
     "unit": "s", "expected": {"queue_wait_s": 300}, "reason": "admitted after 4 s"},
    {"id": "accept.restore", "title": "Checkpoint, delete a pod, restore", "verdict": "fail",
     "measured": 31.5, "unit": "s", "reason": "steps_lost 14 is not <= 10 <b>"},
)  # fmt: skip


@pytest.fixture
def accept_run(tmp_path: Path) -> tuple[str, int]:
    url = f"sqlite:///{tmp_path / 'inventory.db'}"
    record = AcceptanceRecord(
        name="accept-20261201-100000", team="alpha", queue="alpha", pool="lab-hgx-h100x8-ib", pods=2,
        gpus=2, started=T0, finished=T0 + timedelta(minutes=3), outcome="failed", units=0.0,
        verdict="fail", results=ROWS, queue_wait_s=4.0, cost_total=0.25, currency="EUR",
    )  # fmt: skip
    with open_store(url) as store:
        run_id = store.record_acceptance(RunRecord(kind="accept", source="inventory:lab", started=T0), record)
    return url, run_id


def test_an_accept_runs_report_holds_its_rows(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, accept_run: tuple[str, int]
) -> None:
    url, run_id = accept_run
    result = invoke(capsys, "report", str(run_id), "--db", url, "--output", tmp_path / "r")
    assert result.code == 0, result.err
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    assert [e.message for e in validator.iter_errors(doc)] == []
    acc = doc["acceptance"]
    assert [r["id"] for r in acc["rows"]] == ["accept.queue", "accept.restore"]
    assert (acc["outcome"], acc["verdict"], acc["gpus"], doc["summary"]["verdict"]) == (
        "failed",
        "fail",
        2,
        "fail",
    )
    md = (tmp_path / "r" / "report.md").read_text()
    assert "## Acceptance" in md and "accept-20261201-100000: alpha's queue alpha on lab-hgx-h100x8-ib" in md
    assert "steps\\_lost 14 is not &lt;= 10 &lt;b&gt;" in md
    page = (tmp_path / "r" / "report.html").read_text()
    assert "<h2>Acceptance</h2>" in page and "steps_lost 14 is not &lt;= 10 &lt;b&gt;" in page
    assert page.count('<tr class="finding ') == 2


def test_other_runs_have_no_acceptance(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'inventory.db'}"
    with open_store(url) as store:
        store.record(RunRecord(kind="validate", source="local", started=T0), [])
    result = invoke(capsys, "report", "latest", "--db", url, "--output", tmp_path / "r", "--format", "json")
    assert result.code == 0, result.err
    assert json.loads((tmp_path / "r" / "report.json").read_text())["acceptance"] is None
