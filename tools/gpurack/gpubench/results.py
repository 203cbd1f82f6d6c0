"""Judging a measurement against its limit: the measured tiers' one rule, on the shared result.

Results are `CheckResult`s built by `checks.registry.result`, the constructor the quick tier uses
(title, remediation and limit_source from the spec, evidence cut to 20 lines); this module
adds the percentage of the limit and the threshold that turns it into a verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import result
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import CheckResult, Verdict

from gpurack.gpubench.limits import THRESHOLDS, Limit

TierName = Literal["standard", "burn-in"]


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
    details: dict[str, Any] | None = None,
) -> CheckResult:
    """A measurement judged against its limit with the threshold of `threshold_id or check_id`.

    Without a limit (model not in the table) the result is a skip that still carries the number.
    """
    value = round(measured, 3)
    if limit is None:
        return result(
            check_id, Verdict.SKIP, component=component, tier=tier, measured=value, unit=unit,
            source=source, lines=lines, duration_s=duration_s, details=details,
            reason=f"measured {value:g} {unit}, but the GPU model table has no limit for this GPU",
        )  # fmt: skip
    threshold = THRESHOLDS[threshold_id or check_id]
    verdict = threshold.verdict(measured, limit.value)
    percent = round(100 * measured / limit.value, 1) if limit.value > 0 else None
    need = f"pass needs >= {threshold.pass_ratio:.0%}, warn >= {threshold.warn_ratio:.0%}"
    reason = f"{value:g} {unit} is {percent:g}% of the {limit.value:g} {limit.unit} limit ({need})"
    return result(
        check_id, verdict, component=component, tier=tier, measured=value, expected=limit.value,
        unit=unit, reason=reason, source=source, lines=lines, percent=percent,
        duration_s=duration_s, details=details,
        limit_source=f"{limit.source}. Threshold: {threshold.source}",
    )  # fmt: skip
