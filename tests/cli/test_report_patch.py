"""`gpurack report RUN` of a patch run: what it did to each node, and the totals, in report.json
(valid against the schema), report.md and report.html; no such section for other runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import gpurack
import jsonschema
import pytest
from cli_helpers import invoke
from gpurack.inventory import NodeRecord, PatchRecord, RunRecord, open_store
from inventory_helpers import hgx_facts

SCHEMA = Path(gpurack.__file__).parent / "data" / "report.schema.json"
T0 = datetime(2026, 12, 3, 2, tzinfo=UTC)
PATCHES = (
    PatchRecord(
        host="gpu01", outcome="patched", node="lab-w1", drain_s=12.3, update_s=40.1, reboot_s=95.0,
        validation_s=20.2, kernel_before="6.1.0-41-amd64", kernel_after="6.1.0-42-amd64",
        driver_before="580.95.05", driver_after="580.105.08", rebooted=True, validation="pass",
        maintenance_run="awx-1234",
    ),
    PatchRecord(
        host="gpu02", outcome="held", node="gpu02", reason="validation failed: gpu.count <b>", drain_s=3.0,
        update_s=41.0, validation_s=5.5, kernel_before="6.1.0-41-amd64", kernel_after="6.1.0-41-amd64",
        driver_before="", driver_after="580.105.08", rebooted=False, validation="fail",
        maintenance_run="awx-1234",
    ),
    PatchRecord(host="gpu03", outcome="unchanged", node="gpu03", rebooted=False, validation=None),
    PatchRecord(host="gpu04", outcome="refused", reason="cordoned by someone else"),
    PatchRecord(host="gpu05", outcome=None),
)  # fmt: skip


def _errors(doc: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    return [e.message for e in validator.iter_errors(doc)]


def _report(capsys: pytest.CaptureFixture[str], url: str, out: Path, run: str = "latest") -> dict[str, Any]:
    result = invoke(capsys, "report", run, "--db", url, "--output", out)
    assert result.code == 0, result.err
    doc: dict[str, Any] = json.loads((out / "report.json").read_text())
    assert _errors(doc) == []
    return doc


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'inventory.db'}"


def test_a_patch_runs_report_lists_each_node_and_the_totals(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, url: str
) -> None:
    with open_store(url) as store:
        store.record(RunRecord(kind="run", playbook="patch.yml", status="failed", started=T0), [], PATCHES)
    doc = _report(capsys, url, tmp_path / "r")
    patch = doc["patch"]
    assert patch["totals"] == {
        "nodes": 5, "held": 1, "refused": 1, "unknown": 1, "patched": 1, "unchanged": 1,
    }  # fmt: skip
    assert [(n["host"], n["outcome"]) for n in patch["nodes"]] == [
        ("gpu02", "held"),
        ("gpu04", "refused"),
        ("gpu05", None),
        ("gpu01", "patched"),
        ("gpu03", "unchanged"),
    ]
    patched = patch["nodes"][3]
    assert (patched["node"], patched["drain_s"], patched["rebooted"], patched["validation"]) == (
        "lab-w1",
        12.3,
        True,
        "pass",
    )
    assert (patched["kernel_after"], patched["driver_after"], patched["maintenance_run"]) == (
        "6.1.0-42-amd64",
        "580.105.08",
        "awx-1234",
    )

    md = (tmp_path / "r" / "report.md").read_text()
    assert "**5 nodes in the patch run: 1 held, 1 refused, 1 unknown, 1 patched, 1 unchanged**" in md
    assert "## Patch\n\n5 nodes in the patch run: 1 held, 1 refused, 1 unknown, 1 patched, 1 unchanged; " \
        "maintenance run awx-1234\n" in md  # fmt: skip
    assert (
        "| gpu01 (lab-w1) | PATCHED | — | 12.3 s | 40.1 s | 1 min 35 s | 20.2 s "
        "| 6.1.0-41-amd64 → 6.1.0-42-amd64 | 580.95.05 → 580.105.08 | yes | PASS |\n"
    ) in md
    assert (
        "| gpu02 | HELD | validation failed: gpu.count &lt;b&gt; | 3 s | 41 s | — | 5.5 s "
        "| 6.1.0-41-amd64 | — → 580.105.08 | no | FAIL |\n"
    ) in md
    assert "| gpu03 | UNCHANGED | — | — | — | — | — | — | — | no | — |\n" in md
    assert "| gpu05 | UNKNOWN | — |" in md

    page = (tmp_path / "r" / "report.html").read_text()
    assert "<h2>Patch</h2>" in page and "validation failed: gpu.count &lt;b&gt;" in page
    assert page.count('<tr class="patch ') == 5
    assert '<span class="badge held">HELD</span>' in page
    assert "6.1.0-41-amd64 → 6.1.0-42-amd64" in page


def test_a_patch_run_with_snapshots_keeps_the_nodes_summary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, url: str
) -> None:
    node = NodeRecord("gpu01", "h200", "ansible", hgx_facts())
    with open_store(url) as store:
        run_id = store.record(RunRecord(kind="run", playbook="patch.yml", started=T0), [node], PATCHES[:1])
    doc = _report(capsys, url, tmp_path / "r", str(run_id))
    assert [n["host"] for n in doc["nodes"]] == ["gpu01"]
    assert doc["patch"]["totals"]["patched"] == 1
    md = (tmp_path / "r" / "report.md").read_text()
    assert "**1 node: 1 without checks**" in md
    assert "## Patch\n\n1 node in the patch run: 1 patched; maintenance run awx-1234\n" in md


def test_other_runs_have_no_patch_section(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, url: str
) -> None:
    with open_store(url) as store:
        store.record(RunRecord(kind="run", playbook="preflight.yml", started=T0), [])
    doc = _report(capsys, url, tmp_path / "r")
    assert doc["patch"] is None
    assert "## Patch" not in (tmp_path / "r" / "report.md").read_text()
    assert 'class="patch' not in (tmp_path / "r" / "report.html").read_text()
    del doc["patch"]  # as in reports written before the field
    assert _errors(doc) == []
