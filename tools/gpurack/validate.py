"""`gpurack validate`: run the node checks over one node's facts against its pool's expectations."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import run_checks
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import (
    CheckResult,
    Verdict,
    node_verdict,
    not_assessed,
    summarise,
)

from gpurack import facts, outfile, render
from gpurack.errors import ExitCode, UsageError
from gpurack.gpubench import burnin
from gpurack.gpubench import tier as measured_tier
from gpurack.input_checks import input_results
from gpurack.inventory import NodeRecord, RunRecord, open_store

SCHEMA_VERSION = 1
DEFAULT_BURN_IN_S = 600.0
REPORT_JSON = "validation.json"
REPORT_MD = "validation.md"


@dataclass(frozen=True, slots=True)
class Validation:
    """The outcome of validating one node."""

    node: facts.NodeFacts
    tier: str
    results: tuple[CheckResult, ...]
    summary: dict[str, Any]

    @property
    def verdict(self) -> Verdict:
        """The node verdict (docs/checks.md, "Verdicts")."""
        return node_verdict(self.results)

    @property
    def not_assessed(self) -> str | None:
        """Why the node could not be assessed (every check of it skipped), or None."""
        return not_assessed(self.results)

    @property
    def exit_code(self) -> ExitCode:
        """1 when the node verdict is fail, 2 when nothing was assessed; a warn exits 0 (shown as such)."""
        if self.verdict is Verdict.FAIL:
            return ExitCode.FAILED
        return ExitCode.NOT_ASSESSED if self.not_assessed else ExitCode.OK

    def result_dicts(self) -> list[dict[str, Any]]:
        """The results in their JSON shape."""
        return [r.to_dict() for r in self.results]

    def as_dict(self) -> dict[str, Any]:
        """The machine form printed by `--json` and written by `--output`."""
        return {
            "schema_version": SCHEMA_VERSION,
            "host": self.node.host,
            "source": self.node.origin.as_dict(),
            "tier": self.tier,
            "facts": self.node.facts,
            "labels": self.node.labels,
            "results": self.result_dicts(),
            "summary": self.summary,
        }


def validate(
    node: facts.NodeFacts,
    expect: dict[str, Any],
    tier: str,
    *,
    burn_in_s: float = DEFAULT_BURN_IN_S,
    pool: dict[str, Any] | None = None,
    expect_file: Path | None = None,
) -> Validation:
    """Run the checks of `tier` over the node's facts against `expect` (read from
    `expect_file`) and the node's `pool`.

    The quick checks read facts only; standard and burn-in add measurements, which need the
    machine itself, so they run only for `--local`. What was read is judged too
    (`input_checks`): an expectations file that expects nothing, undecodable capture files.

    Raises:
        UsageError: a measured tier was asked of a capture.
    """
    results = input_results(expect_file, expect, node.warnings)
    results += run_checks(node.facts, expect, tier="quick", pool=pool)
    if tier != "quick":
        if node.origin.kind != "local":
            raise UsageError(f"--tier {tier} measures the GPUs of this machine: use --local, not a capture")
        results += _measure(node, tier, burn_in_s)
    return Validation(node=node, tier=tier, results=tuple(results), summary=summarise(results))


def _measure(node: facts.NodeFacts, tier: str, burn_in_s: float) -> list[CheckResult]:
    """Standard or burn-in measurements; counters are re-read afterwards to find what rose."""

    def gather() -> dict[str, Any]:
        return dict(facts.gather(node.origin))

    with render.status(f"{tier} tier on {node.host}") as say:
        if tier == "standard":
            return measured_tier.run_standard(node.facts, gather, say)
        return burnin.run_burn_in(burn_in_s, node.facts, gather, say)


def record(validation: Validation, pool: dict[str, Any], db: str | None) -> int:
    """Keep the node's facts and verdicts in the inventory DB; return the run id.

    Captures are recorded as `capture:<path>`, so history says which verdicts came from a
    bundle rather than from the machine itself.
    """
    origin = validation.node.origin
    source = f"capture:{origin.path}" if origin.kind == "capture" else "local"
    node = NodeRecord(
        host=validation.node.host,
        pool=pool.get("name"),
        source=source,
        facts=validation.node.facts,
        labels=validation.node.labels,
        results=tuple(validation.result_dicts()),
    )
    status = "failed" if validation.exit_code else "successful"
    with open_store(db) as store:
        return store.record(RunRecord(kind="validate", source=source, status=status), [node])


def report_paths(folder: Path) -> tuple[Path, Path]:
    """The JSON and Markdown reports `write_reports` puts into `folder`."""
    return folder / REPORT_JSON, folder / REPORT_MD


def write_reports(validation: Validation, folder: Path, *, force: bool = False) -> tuple[Path, ...]:
    """Write the JSON and Markdown reports into `folder`, each atomically; return their paths.

    Raises:
        UsageError: a report is already there and `force` is off, or the folder is not writable.
    """
    json_path, md_path = report_paths(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write {folder}: {exc.strerror or exc}") from exc
    if not force:
        outfile.refuse_existing([json_path, md_path])
    outfile.write_text(
        json_path, json.dumps(validation.as_dict(), indent=2, default=str) + "\n", replace=force
    )
    outfile.write_text(
        md_path,
        render.results_markdown(validation.node.host, validation.result_dicts(), validation.summary),
        replace=force,
    )
    return json_path, md_path
