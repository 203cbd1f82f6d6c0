"""`gpurack accept`: run playbooks/accept.yml through ansible-runner, read its seven rows back,
and keep the run (its GPUs' allocation, its cost, its rows) in the inventory DB.

The rows and what the run comes to (outcome, GPUs' allocation, useful units, cost) are made
once, in the playbook (filters `acceptance_rows` and `acceptance_summary`), and written to a
JSON file in the run's artifact folder (`acceptance_report_file`); this reads that file and
keeps it as written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost import OUTCOMES
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import Verdict

from gpurack import runner
from gpurack.errors import ExitCode, NotAssessedError
from gpurack.inventory import AcceptanceRecord, RunRecord, open_store
from gpurack.runner import OnEvent, RunRequest, RunResult

REPORT_FILE = "acceptance.json"


@dataclass(frozen=True, slots=True)
class Test:
    """One of the two acceptance tests: its playbook and its role's variable prefix."""

    playbook: str
    prefix: str


TRAINING = Test("accept.yml", "acceptance")
INFERENCE = Test("accept_inference.yml", "inference_acceptance")
PLAYBOOK = TRAINING.playbook


@dataclass(frozen=True, slots=True)
class Acceptance:
    """One acceptance run: the playbook's outcome, its rows and the record to keep."""

    run: RunResult
    inventory: Path
    name: str
    results: tuple[Mapping[str, Any], ...]
    record: AcceptanceRecord
    test: Test = TRAINING

    @property
    def verdict(self) -> str:
        """The run's verdict as the role summed it up (the one rule, results.node_verdict)."""
        return self.record.verdict

    @property
    def exit_code(self) -> ExitCode:
        """1 when a row failed, as `gpurack validate` for a failed check; 0 otherwise."""
        return ExitCode.FAILED if self.verdict == "fail" else ExitCode.OK

    def as_dict(self) -> dict[str, Any]:
        record = self.record
        return {
            "name": self.name,
            "test": "inference" if self.test == INFERENCE else "training",
            "team": record.team,
            "pool": record.pool,
            "verdict": self.verdict,
            "outcome": record.outcome,
            "accepted_units": record.units,
            "cost_per_unit": record.cost_per_unit,
            "currency": record.currency,
            "results": list(self.results),
            "artifacts": str(self.run.artifact_dir),
        }


def record_of(
    name: str, results: Sequence[Mapping[str, Any]], summary: Mapping[str, Any]
) -> AcceptanceRecord:
    """What to keep of one run: its rows and the summary the role made of them (filter
    `acceptance_summary`), as written; nothing here re-derives either.

    Raises:
        KeyError, TypeError, ValueError: `summary` is not the filter's shape.
    """
    outcome = str(summary["outcome"])
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome {outcome!r} is not one of {', '.join(OUTCOMES)}")
    verdict = Verdict.parse(str(summary["verdict"])).value
    return AcceptanceRecord(
        name=name,
        team=str(summary["team"]),
        queue=str(summary["queue"]),
        pool=str(summary["pool"]),
        pods=int(summary["pods"]),
        gpus=int(summary["gpus"]),
        started=datetime.fromisoformat(str(summary["started"])),
        finished=datetime.fromisoformat(str(summary["finished"])),
        outcome=outcome,
        units=float(summary["units"]),
        verdict=verdict,
        results=tuple(results),
        queue_wait_s=_number(summary.get("queue_wait_s")),
        cost_total=_number(summary.get("cost_total")),
        cost_per_unit=_number(summary.get("cost_per_unit")),
        currency=str(summary.get("currency") or ""),
    )


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def read_report(path: Path, run: RunResult, inventory: Path, test: Test = TRAINING) -> Acceptance:
    """The rows the playbook wrote.

    Raises:
        NotAssessedError: no report (the playbook stopped before the rows), or not its shape.
    """
    try:
        data = json.loads(path.read_text())
        name, results = str(data["run"]), tuple(data["results"])
        record = record_of(name, results, data["summary"])
        return Acceptance(run=run, inventory=inventory, name=name, results=results, record=record, test=test)
    except FileNotFoundError:
        raise NotAssessedError(
            f"the acceptance playbook wrote no rows ({run.status}); see {run.artifact_dir}"
        ) from None
    except (KeyError, TypeError, ValueError) as exc:
        raise NotAssessedError(f"{path}: not an acceptance report ({exc})") from None


def run(
    request: RunRequest, runs_dir: Path, on_event: OnEvent | None = None, test: Test = TRAINING
) -> Acceptance:
    """Run the acceptance playbook of `request` (the `test`'s) and read its rows.

    Raises:
        NotAssessedError: as read_report.
    """
    report, result = runner.run_reporting(request, runs_dir, test.prefix, on_event)
    return read_report(report, result, request.inventory, test)


def record(acceptance: Acceptance, db: str | None) -> int:
    """Keep the run and its rows in the inventory DB; return the run id."""
    status = "failed" if acceptance.exit_code else "successful"
    run_record = RunRecord(
        kind="accept",
        source=f"inventory:{acceptance.inventory}",
        playbook=acceptance.test.playbook,
        status=status,
        started=acceptance.record.started,
        finished=acceptance.record.finished,
    )
    with open_store(db) as store:
        return store.record_acceptance(run_record, acceptance.record)
