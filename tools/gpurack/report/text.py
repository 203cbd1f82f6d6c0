"""Wording that report.md and report.html share: the run line, the summary line, verdict words."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import VERDICT_ORDER

from gpurack import formatting
from gpurack.report.model import PATCH_ORDER


def verdict_word(verdict: str | None) -> str:
    """`FAIL`, `WARN`, `PASS`, `SKIP`; `UNCHECKED` for a node without results."""
    return "UNCHECKED" if verdict is None else verdict.upper()


def run_line(doc: Mapping[str, Any]) -> str:
    """`validate from local, status successful, started 2026-11-30 09:00:00 UTC`."""
    run = doc["run"]
    parts = [f"{run['kind']} from {run['source']}", f"status {run['status']}"]
    if run["playbook"]:
        parts.insert(1, f"playbook {run['playbook']}")
    parts.append(f"started {formatting.timestamp(run['started'])}")
    if run["finished"]:
        parts.append(f"finished {formatting.timestamp(run['finished'])}")
    return ", ".join(parts)


def summary_line(doc: Mapping[str, Any]) -> str:
    """`2 nodes: 1 fail, 1 pass` (verdicts in the order of the rule); an accept run's line; a
    patch run's that took no snapshot."""
    if doc.get("acceptance"):
        return acceptance_line(doc["acceptance"])
    if doc.get("patch") and not doc["nodes"]:
        return patch_line(doc["patch"])
    if doc.get("results") and not doc["nodes"]:
        return results_line(doc["results"])
    counts = doc["summary"]
    parts = [f"{counts[v.value]} {v.value}" for v in VERDICT_ORDER if counts[v.value]]
    if counts["unchecked"]:
        parts.append(f"{counts['unchecked']} without checks")
    return f"{formatting.plural(counts['nodes'], 'node')}: {', '.join(parts) or 'none recorded'}"


def results_line(results: Sequence[Mapping[str, Any]]) -> str:
    """`11 results about the cluster: 1 fail, 5 pass, 5 skip` (a conformance run's)."""
    counts = {v.value: sum(1 for r in results if r["verdict"] == v.value) for v in VERDICT_ORDER}
    parts = [f"{counts[v.value]} {v.value}" for v in VERDICT_ORDER if counts[v.value]]
    return f"{formatting.plural(len(results), 'result')} about the cluster: {', '.join(parts)}"


def check_title(finding: Mapping[str, Any]) -> str:
    """A finding's title, its id when the check has none."""
    return str(finding["title"] or finding["id"])


def value(finding: Mapping[str, Any], field: str) -> str:
    """The finding's measured or expected value in human form, with its unit."""
    return formatting.value(finding[field], finding["unit"])


def result_counts(node: Mapping[str, Any]) -> str:
    """`24 warn, 57 pass, 19 skip`: the node's results per verdict, in the order of the rule."""
    counts = node["counts"]
    return ", ".join(f"{counts[v.value]} {v.value}" for v in VERDICT_ORDER if counts[v.value]) or "none"


def acceptance_line(acc: Mapping[str, Any]) -> str:
    """`accept-1: alpha's queue on lab-h100 (2 pods, 2 GPUs), accepted: 1,920 units at 0.0012 EUR each`."""
    serving = acc.get("test") == "inference"
    where = (
        f"{acc['team']}'s {'service' if serving else 'queue'} {acc['queue']} on {acc['pool'] or 'no pool'}"
    )
    pods = formatting.plural(acc["pods"], "replica" if serving else "pod")
    held = f"{'up to ' if serving else ''}{pods}, {formatting.plural(acc['gpus'], 'GPU')}"
    line = f"{acc['name']}: {where} ({held}), {acc['outcome']}"
    if acc["outcome"] == "accepted":
        line += f": {formatting.number(acc['accepted_units'])} {'requests' if serving else 'units'}"
        if acc["cost_per_unit"] is not None:
            price = " ".join(filter(None, (formatting.number(acc["cost_per_unit"]), acc["currency"])))
            line += f" at {price} each"
    return line


def patch_line(patch: Mapping[str, Any]) -> str:
    """`3 nodes in the patch run: 1 held, 2 patched`: its nodes per outcome, in the report's order."""
    totals = patch["totals"]
    outcomes = (outcome or "unknown" for outcome in PATCH_ORDER)
    parts = [f"{totals[o]} {o}" for o in outcomes if totals[o]]
    return f"{formatting.plural(totals['nodes'], 'node')} in the patch run: {', '.join(parts)}"


def patch_section_line(patch: Mapping[str, Any]) -> str:
    """`patch_line`, then the maintenance runs of its nodes' annotation: `...; maintenance run awx-1234`."""
    runs = sorted({n["maintenance_run"] for n in patch["nodes"] if n["maintenance_run"]})
    if not runs:
        return patch_line(patch)
    return f"{patch_line(patch)}; maintenance {'run' if len(runs) == 1 else 'runs'} {', '.join(runs)}"


def outcome_word(outcome: str | None) -> str:
    """`HELD`, `PATCHED`; `UNKNOWN` when the node's fact named no outcome."""
    return (outcome or "unknown").upper()


# A patch run's timed steps, as report.json names their durations.
PATCH_STEPS = ("drain_s", "update_s", "reboot_s", "validation_s")


def patch_node(node: Mapping[str, Any]) -> str:
    """The host, with its Kubernetes Node when that has another name: `gpu01 (lab-w1)`."""
    name = node["node"]
    return node["host"] if not name or name == node["host"] else f"{node['host']} ({name})"


def validation_word(verdict: str | None) -> str:
    """The validation gate's verdict as a word (`PASS`); — when the gate did not run."""
    return verdict_word(verdict) if verdict else formatting.MISSING
