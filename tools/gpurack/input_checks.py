"""Results about what a validation read, not about the hardware: warnings in the result model.

An expectations file that expects nothing, or a capture whose bytes had to be replaced, means
the checks judged less than the operator thinks; each is a `warn` result, so the node's and
the run's verdict say so (never a silent pass) and reports and the DB keep it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import (
    INPUT_COMPONENT,
    CheckResult,
    Evidence,
    Verdict,
)

EXPECT_EMPTY = "expect.empty"
CAPTURE_DECODING = "capture.decoding"


def input_results(
    expect_file: Path | None, expect: Mapping[str, Any], capture_warnings: Sequence[str]
) -> list[CheckResult]:
    """The warnings about a validation's inputs; [] when there is nothing to say."""
    results = []
    if expect_file is not None and not expect:
        results.append(_expect_empty(expect_file))
    if capture_warnings:
        results.append(_capture_decoding(capture_warnings))
    return results


def _expect_empty(expect_file: Path) -> CheckResult:
    return CheckResult(
        id=EXPECT_EMPTY,
        component=INPUT_COMPONENT,
        verdict=Verdict.WARN,
        title="Expectations given",
        measured="no keys",
        expected="at least one key",
        reason=f"{expect_file} holds no expectations: nothing the pool expects was checked",
        remediation="Add the pool's gpurack_expect keys (docs/checks.md), or drop --expect",
        evidence=Evidence(source=str(expect_file)),
    )


def _capture_decoding(warnings: Sequence[str]) -> CheckResult:
    return CheckResult(
        id=CAPTURE_DECODING,
        component=INPUT_COMPONENT,
        verdict=Verdict.WARN,
        title="Capture files are UTF-8 text",
        measured=len(warnings),
        expected=0,
        unit="files",
        reason=f"{len(warnings)} capture file(s) held bytes that are not UTF-8; they were read as U+FFFD",
        remediation="Capture the node again with `gpurack capture` (the bundle was altered or mis-copied)",
        evidence=Evidence(source="capture", lines=tuple(warnings)),
    )
