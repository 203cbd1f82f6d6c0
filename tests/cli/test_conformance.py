"""`gpurack conformance`: the results the playbook wrote become PRODUCT.yaml, junit.xml and the
evidence pages, are recorded in the inventory DB (and `gpurack report` shows them), and set the
exit code; a failed test is exit 1, nothing tested exit 2, a bad --only exit 64."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance import run
from cli_helpers import invoke
from conformance_fakes import FakeCluster, settings
from gpurack import runner
from gpurack.errors import ExitCode
from gpurack.runner import RunRequest, RunResult


def _inventory(tmp_path: Path) -> Path:
    hosts = tmp_path / "inventory" / "hosts.yml"
    hosts.parent.mkdir(exist_ok=True)
    hosts.write_text(
        yaml.safe_dump({"all": {"vars": {"gpurack_teams": [{"name": "alpha"}]}, "hosts": {"w1": {}}}})
    )
    return hosts.parent


def _fake_playbook(monkeypatch: pytest.MonkeyPatch, cluster: FakeCluster | None) -> list[RunRequest]:
    """Stand in for ansible-runner: the role's report of the suite run against `cluster` (None:
    the playbook stopped before writing one)."""
    seen: list[RunRequest] = []

    def run_playbook(request: RunRequest, runs_dir: Path, on_event: Any = None) -> RunResult:
        seen.append(request)
        if cluster is not None:
            results = [r.to_dict() for r in run(cluster, settings())]
            report = {"run": "conformance-1", "kubernetes_version": "v1.36.3", "results": results}
            Path(request.extravars["conformance_report_file"]).write_text(json.dumps(report))
        return RunResult("successful", 0, ExitCode.OK, (), (), (), runs_dir)

    monkeypatch.setattr(runner, "run_playbook", run_playbook)
    return seen


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("GPURACK_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("COLUMNS", "200")
    return f"sqlite:///{tmp_path / 'inventory.db'}"


def test_conformance_writes_the_evidence_records_and_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], state: str
) -> None:
    seen = _fake_playbook(monkeypatch, FakeCluster())
    out = tmp_path / "evidence"
    meta = tmp_path / "meta.yml"
    meta.write_text("vendorName: Example\n")
    result = invoke(capsys, "conformance", "-i", _inventory(tmp_path), "--output", out, "--team", "alpha",
                    "--metadata", meta, "--db", state)  # fmt: skip
    assert result.code == 0, result.err
    assert seen[0].extravars["conformance_team"] == "alpha"
    assert seen[0].extravars["conformance_fail_on_failure"] is False
    product = yaml.safe_load((out / "PRODUCT.yaml").read_text())
    assert product["metadata"]["vendorName"] == "Example"
    assert product["metadata"]["platformName"] == "gpurack"
    assert product["metadata"]["kubernetesVersion"] == "v1.36.3"
    statuses = {e["id"]: e["status"] for c in product["spec"].values() for e in c}
    assert statuses["gang_scheduling"] == "Implemented" and statuses["ai_inference"] == "Not Implemented"
    for entry in (e for c in product["spec"].values() for e in c):
        for evidence in entry["evidence"]:
            assert (out / evidence).is_file(), evidence  # as the program's validator checks
    ET.parse(out / "junit.xml")
    assert "gang_scheduling" in result.out and "Implemented" in result.out

    with_id = invoke(
        capsys, "report", "1", "--db", state, "--output", tmp_path / "report1", "--format", "md,json"
    )
    assert with_id.code == 0, with_id.err
    text = (tmp_path / "report1" / "report.md").read_text()
    assert "## Results" in text and "conformance.gang_scheduling.fits" in text
    doc = json.loads((tmp_path / "report1" / "report.json").read_text())
    assert doc["run"]["kind"] == "conformance" and len(doc["results"]) == 17


def test_a_failed_test_exits_1_and_appears_as_a_junit_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], state: str
) -> None:
    _fake_playbook(monkeypatch, FakeCluster(running={"gang-fits": 1}))
    out = tmp_path / "evidence"
    result = invoke(
        capsys, "conformance", "-i", _inventory(tmp_path), "--output", out, "--json", "--db", state
    )
    assert result.code == 1, result.err
    printed = json.loads(result.out)
    assert {r["id"]: r["status"] for r in printed["requirements"]}["gang_scheduling"] == "Not Implemented"
    failures = [
        c.get("name") for c in ET.parse(out / "junit.xml").iter("testcase") if c.find("failure") is not None
    ]
    assert failures == ["conformance.gang_scheduling.fits"]


def test_no_results_is_exit_2_and_existing_evidence_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], state: str
) -> None:
    _fake_playbook(monkeypatch, None)
    result = invoke(
        capsys, "conformance", "-i", _inventory(tmp_path), "--output", tmp_path / "o", "--db", state
    )
    assert result.code == 2 and "wrote no results" in result.err
    _fake_playbook(monkeypatch, FakeCluster())
    out = tmp_path / "kept"
    out.mkdir()
    (out / "PRODUCT.yaml").write_text("mine\n")
    result = invoke(capsys, "conformance", "-i", _inventory(tmp_path), "--output", out, "--no-record")
    assert result.code == 64 and (out / "PRODUCT.yaml").read_text() == "mine\n"


def test_an_unknown_requirement_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_playbook(monkeypatch, FakeCluster())
    result = invoke(capsys, "conformance", "-i", _inventory(tmp_path), "--output", tmp_path / "o",
                    "--only", "gang", "--no-record")  # fmt: skip
    assert result.code == 64 and "unknown requirement gang" in result.err
