# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What a conformance run is worth to the CNCF program: each requirement's status from its
tests' verdicts, the PRODUCT.yaml document (the program's checklist shape), the JUnit XML of
the tests and each requirement's evidence page.

The one rule: `Implemented` only when every test of the requirement ran and passed. A failed
test makes it `Not Implemented` with the failure in its notes; some passed and the rest could
not run is `Partially Implemented`; nothing ran is `Not Implemented` with why (`N/A` for a
requirement that does not apply to gpurack). Nothing untested is ever `Implemented`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.catalog import (
    CATALOG,
    CATEGORIES,
    PROGRAM_VERSION,
    Requirement,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import Verdict, overall

IMPLEMENTED, PARTIAL, NOT_IMPLEMENTED, NOT_APPLICABLE = (
    "Implemented",
    "Partially Implemented",
    "Not Implemented",
    "N/A",
)
STATUSES: tuple[str, ...] = (IMPLEMENTED, PARTIAL, NOT_IMPLEMENTED, NOT_APPLICABLE)
JUNIT_FILE, PRODUCT_FILE, EVIDENCE_DIR = "junit.xml", "PRODUCT.yaml", "evidence"
SUITE = "gpurack AI conformance"


@dataclass(frozen=True)
class Status:
    """A requirement's status for the program, the notes that justify it, and its evidence files."""

    requirement: Requirement
    status: str
    notes: str
    verdict: Verdict
    evidence: tuple[str, ...] = ()


def _verdict(result: Mapping[str, Any]) -> Verdict:
    return Verdict.parse(result.get("verdict"))


def _why(results: Sequence[Mapping[str, Any]], verdict: Verdict) -> str:
    return "; ".join(f"{r.get('id')}: {r.get('reason')}" for r in results if _verdict(r) is verdict)


def status_of(requirement: Requirement, results: Sequence[Mapping[str, Any]]) -> Status:
    """The requirement's status from its results (the rule of this module's docstring)."""
    mine = [r for r in results if r.get("component") == requirement.id]
    ran = [r for r in mine if _verdict(r) is not Verdict.SKIP]
    verdict = overall(_verdict(r) for r in mine)
    files = (JUNIT_FILE, f"{EVIDENCE_DIR}/{requirement.id}.md") if ran else ()
    if not requirement.tests:
        status = NOT_APPLICABLE if requirement.not_applicable else NOT_IMPLEMENTED
        return Status(requirement, status, requirement.untested, verdict)
    if verdict is Verdict.FAIL:
        return Status(requirement, NOT_IMPLEMENTED, "FAILED: " + _why(mine, Verdict.FAIL), verdict, files)
    tested = {str(r.get("id")) for r in ran}
    if ran and tested >= set(requirement.tests):
        return Status(requirement, IMPLEMENTED, "", verdict, files)
    untested = _why(mine, Verdict.SKIP) or "not run in this conformance run"
    if ran:
        return Status(
            requirement,
            PARTIAL,
            f"passed: {', '.join(sorted(tested))}; not tested: {untested}",
            verdict,
            files,
        )
    return Status(requirement, NOT_IMPLEMENTED, f"not tested: {untested}", verdict)


def statuses(results: Sequence[Mapping[str, Any]]) -> list[Status]:
    """Every requirement of the catalog with its status, in the catalog's order."""
    return [status_of(r, results) for r in CATALOG]


def product(results: Sequence[Mapping[str, Any]], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The PRODUCT.yaml document: `metadata` as given, and per category each requirement's id,
    description, level, status, evidence and notes."""
    spec: dict[str, list[dict[str, Any]]] = {category: [] for category in CATEGORIES}
    for found in statuses(results):
        r = found.requirement
        spec[r.category].append(
            {
                "id": r.id,
                "description": r.description,
                "level": r.level,
                "status": found.status,
                "evidence": list(found.evidence),
                "notes": found.notes,
            }
        )
    return {"metadata": {"kubernetesVersion": PROGRAM_VERSION, **metadata}, "spec": spec}


def junit(results: Sequence[Mapping[str, Any]], timestamp: str = "") -> str:
    """JUnit XML: one testsuite, one testcase per result (classname its requirement); a fail
    is a <failure>, a skip <skipped> with its reason."""
    failures = sum(1 for r in results if _verdict(r) is Verdict.FAIL)
    skipped = sum(1 for r in results if _verdict(r) is Verdict.SKIP)
    counts = {"tests": str(len(results)), "failures": str(failures), "errors": "0", "skipped": str(skipped)}
    total = sum(float(r.get("duration_s") or 0) for r in results)
    root = ET.Element("testsuites", {**counts, "time": f"{total:.3f}"})
    suite = ET.SubElement(
        root,
        "testsuite",
        {"name": SUITE, **counts, "time": f"{total:.3f}", **({"timestamp": timestamp} if timestamp else {})},
    )
    for r in results:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "name": str(r.get("id")),
                "classname": str(r.get("component")),
                "time": f"{float(r.get('duration_s') or 0):.3f}",
            },
        )
        verdict = _verdict(r)
        if verdict is Verdict.FAIL:
            ET.SubElement(case, "failure", {"message": str(r.get("reason") or ""), "type": "fail"}).text = (
                "\n".join(_lines(r)) or None
            )
        elif verdict is Verdict.SKIP:
            ET.SubElement(case, "skipped", {"message": str(r.get("reason") or "")})
        if _lines(r):
            ET.SubElement(case, "system-out").text = "\n".join(_lines(r))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _lines(result: Mapping[str, Any]) -> list[str]:
    evidence = result.get("evidence")
    lines = evidence.get("lines") if isinstance(evidence, Mapping) else None
    return [str(x) for x in lines] if isinstance(lines, list) else []


def evidence_page(found: Status, results: Sequence[Mapping[str, Any]]) -> str:
    """evidence/<id>.md: the requirement, how it was tested, and each test's verdict, reason and
    evidence lines (as an indented block: no cluster text becomes Markdown markup)."""
    r = found.requirement
    out = [f"# {r.id} ({r.level}): {found.status}\n\n", f"How it is tested: {r.how}\n\n"]
    for result in (x for x in results if x.get("component") == r.id):
        out.append(f"## {result.get('id')}: {_verdict(result).value}\n\n")
        if result.get("reason"):
            out.append(f"    {result.get('reason')}\n\n")
        out.extend(f"    {line}\n" for line in _lines(result))
        out.append("\n")
    return "".join(out)
