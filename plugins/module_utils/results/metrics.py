# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""A node's check results as Prometheus text exposition (the node exporter's textfile collector).

Pure and stdlib only: the `validation_textfile` module renders on the node, tests parse it back.
The metrics (docs/platform.md, "Metrics and the Node condition"):

- `gpurack_check_verdict{node,pool,check,component,verdict}`: one series per verdict of
  VERDICTS for each (check, component); 1 for the result's verdict, 0 for the other three
  (a state set, as kube-state-metrics does for pod phases), so
  `gpurack_check_verdict{verdict="fail"} == 1` lists the failing checks;
- `gpurack_check_measured{node,pool,check,component}`: the measured value, for results whose
  `measured` is a number (a bool is 1 or 0); other measurements (text, lists) have no series;
- `gpurack_node_validated{node,pool}`: 1 when the node was admitted (its validating taint
  lifted), else 0;
- `gpurack_node_validation_timestamp_seconds{node,pool}`: Unix time of the validation that
  produced these values. A later validation with the same values keeps the file (and this
  timestamp) as it is, so a re-run changes nothing: `same_values` compares without it.

Two results with the same check and component (not expected) give one series, of the more
significant verdict (`sort_results`), since an exposition may not repeat a series.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import (
    VERDICTS,
    CheckResult,
    Verdict,
    as_result,
    node_verdict,
    sort_results,
)

TEXTFILE_NAME = "gpurack.prom"
CHECK_VERDICT = "gpurack_check_verdict"
CHECK_MEASURED = "gpurack_check_measured"
NODE_VALIDATED = "gpurack_node_validated"
VALIDATION_TIMESTAMP = "gpurack_node_validation_timestamp_seconds"

HELP = {
    CHECK_VERDICT: "Verdict of a gpurack check on a component: 1 for its verdict, 0 for the others.",
    CHECK_MEASURED: "What a gpurack check measured on a component, where that is a number.",
    NODE_VALIDATED: "1 when gpurack validation admitted the node (validating taint lifted), else 0.",
    VALIDATION_TIMESTAMP: "Unix time of the gpurack validation that produced these values.",
}


def escape_label_value(value: object) -> str:
    """A label value as the exposition format quotes it: backslash, double quote and newline escaped."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(text: str) -> str:
    """HELP text: backslash and newline escaped."""
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    """A sample value: integers without a fraction, NaN and +Inf/-Inf as the format spells them."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def sample(name: str, labels: Mapping[str, object], value: float) -> str:
    """One sample line, labels in the order given."""
    text = ",".join(f'{k}="{escape_label_value(v)}"' for k, v in labels.items())
    return f"{name}{{{text}}} {format_value(value)}"


def measured_number(measured: object) -> float | None:
    """The measured value as a number, or None when it is not one (text, a list, a mapping, None)."""
    if isinstance(measured, (bool, int, float)):
        return measured
    return None


def _family(name: str, lines: list[str]) -> list[str]:
    return [f"# HELP {name} {escape_help(HELP[name])}", f"# TYPE {name} gauge", *lines]


def _unique(results: Iterable[CheckResult | Mapping[str, Any]]) -> list[CheckResult]:
    """One result per (check, component), the most significant kept; ordered by check and component."""
    kept: dict[tuple[str, str], CheckResult] = {}
    for result in sort_results(as_result(r) for r in results):
        kept.setdefault((result.id, result.component), result)
    return [kept[k] for k in sorted(kept)]


def render_textfile(
    node: str,
    pool: str | None,
    results: Iterable[CheckResult | Mapping[str, Any]],
    timestamp: float,
    validated: bool | None = None,
) -> str:
    """The textfile for one node: HELP and TYPE per family, series in a fixed order, final newline.

    `validated` defaults to the node verdict being pass; the validation role passes its
    `admitted` (a warn admits unless preflight_fail_on_warn).
    """
    items = _unique(results)
    if validated is None:
        validated = node_verdict(items) is Verdict.PASS
    where = {"node": node, "pool": pool or ""}
    verdicts: list[str] = []
    measured: list[str] = []
    for result in items:
        labels = {**where, "check": result.id, "component": result.component}
        for verdict in VERDICTS:
            verdicts.append(
                sample(CHECK_VERDICT, {**labels, "verdict": verdict}, int(result.verdict.value == verdict))
            )
        number = measured_number(result.measured)
        if number is not None:
            measured.append(sample(CHECK_MEASURED, labels, number))
    lines = [
        *_family(CHECK_VERDICT, verdicts),
        *_family(CHECK_MEASURED, measured),
        *_family(NODE_VALIDATED, [sample(NODE_VALIDATED, where, int(validated))]),
        *_family(VALIDATION_TIMESTAMP, [sample(VALIDATION_TIMESTAMP, where, round(timestamp, 3))]),
    ]
    return "\n".join(lines) + "\n"


def same_values(old: str | None, new: str) -> bool:
    """Whether two textfiles say the same apart from the validation timestamp."""
    if old is None:
        return False

    def values(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith(VALIDATION_TIMESTAMP + "{")]

    return values(old) == values(new)
