# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The result model: `CheckResult`, the verdicts, their one order and the verdict rule
(stated in this package's docstring, results/__init__.py). Stdlib only: it ships to nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any

EVIDENCE_MAX_LINES = 20


class Verdict(str, Enum):  # noqa: UP042 - StrEnum is 3.11+, nodes may run an older Python
    """What a check concluded. The values are the strings stored and printed everywhere."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value: object) -> Verdict:
        """A Verdict from a Verdict or its string; ValueError names the allowed values."""
        if isinstance(value, Verdict):
            return value
        try:
            return cls(str(value))
        except ValueError:
            allowed = ", ".join(v.value for v in cls)
            raise ValueError(f"verdict must be one of {allowed}, got {value!r}") from None


# Most significant first: the order of the rule above, and the order results are listed in.
VERDICT_ORDER: tuple[Verdict, ...] = (Verdict.FAIL, Verdict.WARN, Verdict.PASS, Verdict.SKIP)
VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)
# The verdicts shown as findings (with their reason and fix): what did not pass and was assessed.
FINDINGS: frozenset[Verdict] = frozenset({Verdict.FAIL, Verdict.WARN})


def is_finding(verdict: object) -> bool:
    """True for a fail or a warn (as a Verdict or its string), the results a reader must act on."""
    return isinstance(verdict, str) and verdict in FINDINGS


def overall(verdicts: Iterable[Verdict | str]) -> Verdict:
    """The verdict rule: the first of fail, warn, pass present; skip when none is."""
    seen = {Verdict.parse(v) for v in verdicts}
    return next((v for v in VERDICT_ORDER if v in seen), Verdict.SKIP)


def rank(verdict: Verdict | str) -> int:
    """Sort key: 0 for the most significant verdict (fail), as listed by VERDICT_ORDER."""
    return VERDICT_ORDER.index(Verdict.parse(verdict))


@dataclass(frozen=True)
class Evidence:
    """Where a result's measurement came from and the lines that show it (at most 20)."""

    source: str = ""
    lines: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "lines", tuple(str(x) for x in self.lines)[:EVIDENCE_MAX_LINES])


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict on one component (the node, a GPU, an RDMA port, ...).

    `measured`/`expected` hold JSON values; `reason` says why (required for skip);
    `remediation` is given on warn and fail only; `limit_source` says where the limit comes
    from. `percent` (of the limit) and `duration_s` are set by measured checks; `details`
    holds a measured check's extra data (all-reduce points, counter deltas), JSON values.
    """

    id: str
    verdict: Verdict
    title: str = ""
    tier: str = "quick"
    component: str = "node"
    measured: Any = None
    expected: Any = None
    unit: str | None = None
    reason: str = ""
    remediation: str | None = None
    evidence: Evidence = field(default_factory=Evidence)
    limit_source: str = ""
    percent: float | None = None
    duration_s: float | None = None
    details: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        verdict = Verdict.parse(self.verdict)
        object.__setattr__(self, "verdict", verdict)
        if verdict not in (Verdict.WARN, Verdict.FAIL):
            object.__setattr__(self, "remediation", None)
        if self.reason is None:
            object.__setattr__(self, "reason", "")

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of docs/checks.md (verdict as its string)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["verdict"] = self.verdict.value
        out["evidence"] = {"source": self.evidence.source, "lines": list(self.evidence.lines)}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckResult:
        """Read the JSON shape back; unknown keys are ignored, a bad verdict is a ValueError."""
        raw_evidence = data.get("evidence")
        evidence = raw_evidence if isinstance(raw_evidence, Mapping) else {}
        known = {f.name for f in fields(cls)} - {"evidence"}
        kwargs = {k: v for k, v in data.items() if k in known}
        return cls(
            **kwargs,
            evidence=Evidence(str(evidence.get("source") or ""), tuple(evidence.get("lines") or ())),
        )


def as_result(item: CheckResult | Mapping[str, Any]) -> CheckResult:
    """A CheckResult from either form, for consumers that accept stored JSON too."""
    return item if isinstance(item, CheckResult) else CheckResult.from_dict(item)


def verdict_of(item: CheckResult | Mapping[str, Any]) -> Verdict:
    """The verdict of a result in either form."""
    if isinstance(item, CheckResult):
        return item.verdict
    return Verdict.parse(item.get("verdict"))


def node_verdict(results: Iterable[CheckResult | Mapping[str, Any]]) -> Verdict:
    """A node's verdict from its results (the rule in this module's docstring)."""
    return overall(verdict_of(r) for r in results)


# The component of results about a validation's inputs (the expectations file, the capture's
# encoding): they say how the node was read, not what it is, so they assess nothing.
INPUT_COMPONENT = "input"


def not_assessed(results: Iterable[CheckResult | Mapping[str, Any]]) -> str | None:
    """Why a node could not be assessed, or None when it was: the one skip policy.

    Nothing was assessed when no result about the node itself (input results aside) has a
    verdict other than skip. `gpurack validate` then exits 2 and the preflight and validation
    roles fail the node, each with this reason; a node that was not assessed is never admitted.
    """
    items = list(results)
    about_node = [r for r in items if _component(r) != INPUT_COMPONENT]
    if any(verdict_of(r) is not Verdict.SKIP for r in about_node):
        return None
    if not about_node:
        return "nothing was assessed, no check ran"
    reasons = [r for r in dict.fromkeys(str(_field(r, "reason") or "").strip() for r in about_node) if r]
    shown = "; ".join(reasons[:5]) + (f"; and {len(reasons) - 5} more reasons" if len(reasons) > 5 else "")
    return f"nothing was assessed, all {len(about_node)} checks skipped" + (f": {shown}" if shown else "")


def _field(item: CheckResult | Mapping[str, Any], name: str) -> Any:
    return getattr(item, name) if isinstance(item, CheckResult) else item.get(name)


def _component(item: CheckResult | Mapping[str, Any]) -> str:
    return str(_field(item, "component") or "node")


def run_verdict(node_verdicts: Iterable[Verdict | str]) -> Verdict:
    """A run's verdict from its nodes' verdicts: the same rule, one level up."""
    return overall(node_verdicts)


def summarise(results: Iterable[CheckResult | Mapping[str, Any]]) -> dict[str, Any]:
    """Counts per verdict plus the node verdict (as its string), e.g. for a module's output."""
    items = list(results)
    counts: dict[str, Any] = dict.fromkeys(VERDICTS, 0)
    for item in items:
        counts[verdict_of(item).value] += 1
    counts["verdict"] = node_verdict(items).value
    return counts


def sort_results(results: Iterable[CheckResult]) -> list[CheckResult]:
    """Most significant verdict first, then by check id and component (stable for reports)."""
    return sorted(results, key=lambda r: (rank(r.verdict), r.id, r.component))
