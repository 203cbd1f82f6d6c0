# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What every acceptance row is made of, for the training rows (`table`) and the inference
rows (`inference_table`) alike: its identity (`Head`), its figure (`Figure`) and its verdict
against the inventory's thresholds (`judged`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional, Protocol

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult, Verdict

TIER = "acceptance"


class Limits(Protocol):
    """Where a row's thresholds come from: an inventory variable's `thresholds`."""

    @property
    def variable(self) -> str: ...

    def threshold(self, name: str) -> Optional[float]: ...  # noqa: UP045

    def at_most(self, name: str) -> bool: ...


def _limit(limits: Limits, name: str, value: float) -> tuple[bool, Optional[str]]:  # noqa: UP045
    """Whether `value` is within the threshold `name`, and the expectation as text (None: no threshold)."""
    threshold = limits.threshold(name)
    if threshold is None:
        return True, None
    at_most = limits.at_most(name)
    ok = value <= threshold if at_most else value >= threshold
    return ok, f"{'<=' if at_most else '>='} {threshold:g}"


@dataclass(frozen=True)
class Head:
    """A row's identity: its check id, its title and the team it ran for."""

    id: str
    title: str
    component: str

    def missing(self, verdict: Verdict, reason: str, remediation: str = "") -> CheckResult:
        """The row when its figure could not be had: fail (or skip) with the reason."""
        return CheckResult(
            id=self.id,
            verdict=verdict,
            title=self.title,
            tier=TIER,
            component=self.component,
            reason=reason,
            remediation=remediation or None,
        )


@dataclass(frozen=True)
class Figure:
    """A row's measured figure and what goes with it."""

    measured: float
    unit: str
    remediation: str
    details: Mapping[str, Any]
    reason: str = ""


def judged(
    head: Head,
    figure: Figure,
    checks: Sequence[tuple[str, float]],
    limits: Limits,
    miss: Verdict = Verdict.FAIL,
) -> CheckResult:
    """The row: `miss` when any of `checks` (threshold name, value) is outside its threshold."""
    expected, outside = {}, []
    for name, value in checks:
        ok, text = _limit(limits, name, value)
        if text is not None:
            expected[name] = text
        if not ok:
            outside.append(f"{name} {value:g} is not {text}")
    source = f"{limits.variable}.thresholds"
    return CheckResult(
        id=head.id,
        verdict=miss if outside else Verdict.PASS,
        title=head.title,
        tier=TIER,
        component=head.component,
        measured=float(f"{figure.measured:.6g}"),  # six significant digits
        expected=expected or None,
        unit=figure.unit,
        reason="; ".join([*outside, figure.reason] if figure.reason else outside),
        remediation=figure.remediation,
        limit_source=f"inventory: {source}" if expected else f"no threshold set ({source})",
        details=dict(figure.details),
    )
