"""`gpurack conformance`: run playbooks/conformance.yml through ansible-runner, read its results
back, write the evidence in the CNCF AI Conformance program's shape and keep the run in the
inventory DB.

The tests, the requirement catalog and what the results are worth to the program (each
requirement's status, PRODUCT.yaml's document, the JUnit XML) are the collection's
(module_utils/conformance); here they are read and written to files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance import (
    BY_ID,
    EVIDENCE_DIR,
    JUNIT_FILE,
    PRODUCT_FILE,
    Status,
    evidence_page,
    junit,
    product,
    statuses,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import (
    CheckResult,
    Verdict,
    node_verdict,
    not_assessed,
)

from gpurack import __version__, outfile, runner
from gpurack.errors import ExitCode, NotAssessedError, UsageError
from gpurack.inventory import RunRecord, open_store
from gpurack.runner import OnEvent, RunRequest, RunResult

PLAYBOOK = "conformance.yml"
# What PRODUCT.yaml's metadata says of gpurack; the rest (vendor, URLs of the site's own
# submission) is the operator's to fill, from --metadata FILE.
METADATA: dict[str, str] = {
    "platformName": "gpurack",
    "platformVersion": __version__,
    "repoUrl": "",
    "documentationUrl": "",
    "description": "GPU Kubernetes clusters built on bare metal with Ansible (gpurack)",
}


@dataclass(frozen=True, slots=True)
class Conformance:
    """One conformance run: the playbook's outcome, the results and each requirement's status."""

    run: RunResult
    inventory: Path
    name: str
    kubernetes_version: str
    results: tuple[dict[str, Any], ...]
    started: datetime
    finished: datetime

    @property
    def statuses(self) -> list[Status]:
        return statuses(self.results)

    @property
    def exit_code(self) -> ExitCode:
        """1 when a test failed; 2 when no test could run (all skipped); 0 otherwise. A requirement
        that is not implemented here is not a failure: its status says so."""
        if node_verdict(self.results) is Verdict.FAIL:
            return ExitCode.FAILED
        return ExitCode.NOT_ASSESSED if not_assessed(self.results) else ExitCode.OK

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kubernetes_version": self.kubernetes_version,
            "verdict": node_verdict(self.results).value,
            "requirements": [
                {"id": s.requirement.id, "level": s.requirement.level, "status": s.status, "notes": s.notes}
                for s in self.statuses
            ],
            "results": list(self.results),
            "artifacts": str(self.run.artifact_dir),
        }


def check_only(ids: list[str]) -> list[str]:
    """The requirement ids of `--only`, as given.

    Raises:
        UsageError: one is not a requirement of the catalog.
    """
    unknown = [i for i in ids if i not in BY_ID]
    if unknown:
        raise UsageError(f"unknown requirement {', '.join(unknown)} (choose from {', '.join(BY_ID)})")
    return ids


def read_report(path: Path, run: RunResult, inventory: Path, started: datetime) -> Conformance:
    """The results the playbook wrote.

    Raises:
        NotAssessedError: no report (the playbook stopped before the tests), or not its shape.
    """
    try:
        data = json.loads(path.read_text())
        results = tuple(CheckResult.from_dict(r).to_dict() for r in data["results"])
        return Conformance(run, inventory, str(data["run"]), str(data.get("kubernetes_version") or ""),
                           results, started, datetime.now(UTC))  # fmt: skip
    except FileNotFoundError:
        raise NotAssessedError(
            f"the conformance playbook wrote no results ({run.status}); see {run.artifact_dir}"
        ) from None
    except (KeyError, TypeError, ValueError) as exc:
        raise NotAssessedError(f"{path}: not a conformance report ({exc})") from None


def run(request: RunRequest, runs_dir: Path, on_event: OnEvent | None = None) -> Conformance:
    """Run the conformance playbook of `request` and read its results.

    Raises:
        NotAssessedError: as read_report.
    """
    started = datetime.now(UTC)
    report, result = runner.run_reporting(request, runs_dir, "conformance", on_event)
    return read_report(report, result, request.inventory, started)


def documents(found: Conformance, metadata: Mapping[str, Any]) -> dict[str, str]:
    """The evidence files by their path under the output folder: PRODUCT.yaml, junit.xml and
    evidence/<id>.md for each requirement a test ran for."""
    meta = {**METADATA, **metadata}
    if found.kubernetes_version:
        meta.setdefault("kubernetesVersion", found.kubernetes_version)
    doc = product(found.results, meta)
    header = f"# Kubernetes AI Conformance evidence written by gpurack {__version__}, run {found.name}.\n"
    texts = {
        PRODUCT_FILE: header + yaml.safe_dump(doc, sort_keys=False, width=110, allow_unicode=True),
        JUNIT_FILE: junit(found.results, found.started.isoformat(timespec="seconds")),
    }
    for status in found.statuses:
        if status.evidence:
            texts[f"{EVIDENCE_DIR}/{status.requirement.id}.md"] = evidence_page(status, found.results)
    return texts


def write(found: Conformance, folder: Path, metadata: Mapping[str, Any], force: bool = False) -> list[Path]:
    """Write the evidence files into `folder`; nothing when one is there already, unless `force`.

    Raises:
        UsageError: a file exists and `force` is off, or the folder cannot be written.
    """
    texts = {folder / name: text for name, text in documents(found, metadata).items()}
    return outfile.write_texts(texts, force=force)


def record(found: Conformance, db: str | None) -> int:
    """Keep the run and its results in the inventory DB; return the run id."""
    run_record = RunRecord(
        kind="conformance",
        source=f"inventory:{found.inventory}",
        playbook=PLAYBOOK,
        status="failed" if found.exit_code else "successful",
        started=found.started,
        finished=found.finished,
    )
    with open_store(db) as store:
        return store.record_run_results(run_record, found.results)
