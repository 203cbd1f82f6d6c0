"""`gpurack accept`: the rows the playbook wrote are shown, recorded with their GPUs'
allocation and cost, and set the exit code; no rows is exit 2 with one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from acceptance_cluster import raw
from ansible_collections.gpurack.bootstrap.plugins.filter.acceptance import (
    acceptance_rows,
    acceptance_summary,
    inference_acceptance_rows,
    inference_acceptance_summary,
)
from cli_helpers import invoke
from gpurack import acceptance, runner
from gpurack.errors import ExitCode
from gpurack.inventory import open_store
from gpurack.runner import RunRequest, RunResult
from inference_run import RAW


def _inventory(tmp_path: Path) -> Path:
    hosts = tmp_path / "inventory" / "hosts.yml"
    hosts.parent.mkdir()
    hosts.write_text(
        yaml.safe_dump({"all": {"vars": {"gpurack_teams": [{"name": "alpha"}]}, "hosts": {"lab-w2": {}}}})
    )
    return hosts.parent


def _fake_run(monkeypatch: pytest.MonkeyPatch, prefix: str, report: dict[str, Any]) -> list[RunRequest]:
    """Stand in for ansible-runner: write the `report` the role would have written."""
    seen: list[RunRequest] = []

    def run_playbook(request: RunRequest, runs_dir: Path, on_event: Any = None) -> RunResult:
        seen.append(request)
        Path(request.extravars[f"{prefix}_report_file"]).write_text(json.dumps(report))
        return RunResult("successful", 0, ExitCode.OK, (), (), (), runs_dir)

    monkeypatch.setattr(runner, "run_playbook", run_playbook)
    return seen


def _fake_playbook(
    monkeypatch: pytest.MonkeyPatch, gathered: dict[str, Any], settings: Any = None
) -> list[RunRequest]:
    """The training test's report: its rows and summary made from `gathered`."""
    rows = acceptance_rows(gathered, settings)
    report = {
        "run": "accept-1",
        "results": rows,
        "summary": acceptance_summary(gathered, rows),
        "observed": gathered,
    }
    return _fake_run(monkeypatch, "acceptance", report)


def test_a_passing_run_is_shown_recorded_and_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPURACK_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("COLUMNS", "200")  # one line per row
    db = f"sqlite:///{tmp_path / 'inventory.db'}"
    seen = _fake_playbook(monkeypatch, raw())
    result = invoke(capsys, "accept", "-i", _inventory(tmp_path), "--team", "alpha", "--db", db)
    assert result.code == 0, result.err
    assert seen[0].extravars["acceptance_team"] == "alpha"
    assert seen[0].extravars["acceptance_fail_on_failure"] is False
    for step in (
        "1 queued job",
        "3 communication",
        "5 checkpoint, kill, restore",
        "7 useful work vs baseline",
    ):
        assert step in result.out
    assert "cost per accepted unit" in result.out
    with open_store(db) as store:
        (view,) = store.acceptance_runs()
    record = view.record
    assert (record.team, record.pool, record.gpus, record.outcome) == (
        "alpha",
        "lab-hgx-h100x8-ib",
        2,
        "accepted",
    )
    assert record.units == pytest.approx(960)
    assert record.queue_wait_s == 4.0
    assert record.cost_total == pytest.approx(0.2)
    assert [r["id"] for r in record.results][-1] == "accept.cost"


def test_a_failed_row_exits_1_and_the_run_counts_as_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPURACK_STATE_DIR", str(tmp_path / "state"))
    db = f"sqlite:///{tmp_path / 'inventory.db'}"
    _fake_playbook(monkeypatch, raw(), {"thresholds": {"restore_s": 10}})
    result = invoke(capsys, "accept", "-i", _inventory(tmp_path), "--json", "--db", db)
    assert result.code == 1
    shown = json.loads(result.out)
    assert shown["verdict"] == "fail" and shown["outcome"] == "failed"
    restore = next(r for r in shown["results"] if r["id"] == "accept.restore")
    assert restore["reason"].startswith("restore_s 31.5 is not <= 10")
    with open_store(db) as store:
        assert store.acceptance_runs()[0].record.units == 0.0


def test_no_cluster_means_no_rows_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The real playbook against a kubeconfig that does not exist: it stops before the rows."""
    result = invoke(
        capsys,
        "accept",
        "-i",
        _inventory(tmp_path),
        "--no-record",
        "-e",
        f"acceptance_kubeconfig={tmp_path}/none",
    )
    assert result.code == 2
    assert "the acceptance playbook wrote no rows" in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    "report",
    [
        {"results": []},
        {"run": "accept-1", "results": [], "observed": {}},  # before the summary: not re-derived
        {"run": "accept-1", "results": [], "summary": {"outcome": "won"}},
        {"run": "accept-1", "results": [], "summary": {"outcome": "accepted", "verdict": "great"}},
        {
            "run": "accept-1",
            "results": [],
            "summary": {
                **dict.fromkeys(("team", "queue", "pool"), "x"),
                "outcome": "accepted",
                "pods": "two",
            },
        },
    ],
)
def test_a_report_of_another_shape_is_not_assessed(tmp_path: Path, report: dict[str, Any]) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    run = RunResult("successful", 0, ExitCode.OK, (), (), (), tmp_path)
    with pytest.raises(acceptance.NotAssessedError, match="not an acceptance report"):
        acceptance.read_report(path, run, tmp_path)


def test_the_record_is_the_summary_the_role_wrote(tmp_path: Path) -> None:
    """The driver keeps what the playbook summed up; it does not judge the run again."""
    rows = acceptance_rows(raw())
    summary = {**acceptance_summary(raw(), rows), "units": 12345.0, "outcome": "failed"}
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"run": "accept-1", "results": rows, "summary": summary}))
    run = RunResult("successful", 0, ExitCode.OK, (), (), (), tmp_path)
    record = acceptance.read_report(path, run, tmp_path).record
    assert (record.units, record.outcome, record.gpus) == (12345.0, "failed", 2)


def _fake_inference_playbook(monkeypatch: pytest.MonkeyPatch) -> list[RunRequest]:
    """accept_inference.yml's report: its eight rows and summary."""
    rows = inference_acceptance_rows(RAW, {"baseline_per_1000": 0.5}, 500)
    summary = inference_acceptance_summary(RAW, rows)
    report = {"run": "infer-1", "results": rows, "summary": summary, "observed": RAW}
    return _fake_run(monkeypatch, "inference_acceptance", report)


def test_the_inference_test_runs_its_playbook_shows_eight_rows_and_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPURACK_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("COLUMNS", "220")
    db = f"sqlite:///{tmp_path / 'inventory.db'}"
    seen = _fake_inference_playbook(monkeypatch)
    argv = ["accept", "--inference", "-i", _inventory(tmp_path), "--team", "beta", "--service", "embed"]
    result = invoke(capsys, *argv, "--db", db)
    assert result.code == 0, result.err
    assert seen[0].playbook.name == "accept_inference.yml"
    assert seen[0].extravars["inference_acceptance_team"] == "beta"
    assert seen[0].extravars["inference_acceptance_service"] == "embed"
    assert seen[0].extravars["inference_acceptance_fail_on_failure"] is False
    for step in (
        "1 cold start",
        "3 load, 1 in flight",
        "4 load, 8 in flight",
        "6 autoscaling",
        "8 cost vs an API",
    ):
        assert step in result.out
    assert "download 8.0 s" in result.out and "cache miss" in result.out
    assert "2.63 EUR/1000 requests over 1900 requests answered well" in result.out
    with open_store(db) as store:
        (view,) = store.acceptance_runs()
    assert (view.record.team, view.record.queue, view.record.units) == ("beta", "embed", 1900.0)
    assert [r["id"] for r in view.record.results][-1] == "infer.cost"
    # `report RUN` names a service and requests, not a queue and samples.
    out = tmp_path / "report"
    shown = invoke(capsys, "report", str(view.run_id), "--db", db, "--output", out)
    assert shown.code == 0, shown.err
    document = json.loads((out / "report.json").read_text())
    assert document["acceptance"]["test"] == "inference"
    assert len(document["acceptance"]["rows"]) == 8
    markdown = (out / "report.md").read_text()
    assert "Service embed of beta tested" in markdown and "infer.rollout" in markdown
    assert (
        "beta's service embed on h200-inference (up to 2 replicas, 2 GPUs), accepted: 1900 requests"
        in markdown
    )


def test_a_service_without_inference_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = invoke(capsys, "accept", "-i", _inventory(tmp_path), "--service", "embed", "--no-record")
    assert result.code == ExitCode.USAGE
    assert "--service names an inference service: give --inference too" in result.err
