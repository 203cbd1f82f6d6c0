"""Check results of the measured tiers, in the shape the quick tier's checks use.

`{id, title, tier, component, verdict, measured, expected, unit, reason, remediation,
evidence: {source, lines}, limit_source}` plus, here, `percent` (of the limit) and
`duration_s`. Titles, remediation and thresholds come from the check catalogue.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from ansible_collections.gpurack.bootstrap.plugins.module_utils._check_catalogue import BY_ID

from gpurack.gpubench.limits import THRESHOLDS, Limit

Result = dict[str, Any]
Verdict = Literal["pass", "warn", "fail", "skip"]
TierName = Literal["standard", "burn-in"]

_SEVERITY = {"pass": 0, "skip": 0, "warn": 1, "fail": 2}


def worst(verdicts: Sequence[Verdict]) -> Verdict:
    """The most severe verdict: fail > warn > pass; all skips (or none) give pass."""
    if not verdicts:
        return "pass"
    return max(verdicts, key=lambda v: _SEVERITY[v])


def title_of(check_id: str) -> str:
    """Catalogue title, else the id."""
    spec = BY_ID.get(check_id)
    return check_id if spec is None else spec.title


def remediation_of(check_id: str) -> str | None:
    """Catalogue remediation, else None."""
    spec = BY_ID.get(check_id)
    return None if spec is None else spec.remediation


def make_result(
    check_id: str,
    component: str,
    verdict: Verdict,
    *,
    tier: TierName = "standard",
    measured: Any = None,
    expected: Any = None,
    unit: str | None = None,
    reason: str = "",
    remediation: str | None = None,
    source: str = "",
    lines: Sequence[str] = (),
    limit_source: str | None = None,
    percent: float | None = None,
    duration_s: float | None = None,
    **extra: Any,
) -> Result:
    """One check result; remediation defaults to the catalogue's when the verdict is warn or fail."""
    if remediation is None and verdict in ("warn", "fail"):
        remediation = remediation_of(check_id)
    result: Result = {
        "id": check_id,
        "title": title_of(check_id),
        "tier": tier,
        "component": component,
        "verdict": verdict,
        "measured": measured,
        "expected": expected,
        "unit": unit,
        "reason": reason,
        "remediation": remediation,
        "evidence": {"source": source, "lines": list(lines)},
        "limit_source": limit_source,
        "percent": percent,
        "duration_s": duration_s,
    }
    result.update(extra)
    return result


def skip(check_id: str, component: str, reason: str, *, tier: TierName = "standard", **extra: Any) -> Result:
    """A result that could not be assessed, with the reason."""
    return make_result(check_id, component, "skip", tier=tier, reason=reason, **extra)


def judged(
    check_id: str,
    component: str,
    measured: float,
    unit: str,
    limit: Limit | None,
    *,
    tier: TierName = "standard",
    threshold_id: str | None = None,
    source: str = "",
    lines: Sequence[str] = (),
    duration_s: float | None = None,
    **extra: Any,
) -> Result:
    """A measurement judged against its limit with the threshold of `threshold_id or check_id`.

    Without a limit (model not in the table) the result is a skip that still carries the number.
    """
    value = round(measured, 3)
    if limit is None:
        return make_result(
            check_id, component, "skip", tier=tier, measured=value, unit=unit, source=source, lines=lines,
            reason=f"measured {value:g} {unit}, but the GPU model table has no limit for this GPU",
            duration_s=duration_s, **extra,
        )  # fmt: skip
    threshold = THRESHOLDS[threshold_id or check_id]
    verdict: Verdict = threshold.verdict(measured, limit.value)
    percent = round(100 * measured / limit.value, 1) if limit.value > 0 else None
    need = f"pass needs >= {threshold.pass_ratio:.0%}, warn >= {threshold.warn_ratio:.0%}"
    reason = f"{value:g} {unit} is {percent:g}% of the {limit.value:g} {limit.unit} limit ({need})"
    return make_result(
        check_id, component, verdict, tier=tier, measured=value, expected=limit.value, unit=unit,
        reason=reason, source=source, lines=lines, percent=percent, duration_s=duration_s,
        limit_source=f"{limit.source}. Threshold: {threshold.source}", **extra,
    )  # fmt: skip
