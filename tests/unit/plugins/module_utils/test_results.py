"""The one result model: the verdict rule, the result type and its JSON shape."""

from __future__ import annotations

import dataclasses

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import (
    CheckResult,
    Evidence,
    Verdict,
    node_verdict,
    overall,
    run_verdict,
    sort_results,
    summarise,
)


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        (["pass", "warn", "fail", "skip"], Verdict.FAIL),
        (["pass", "warn", "skip"], Verdict.WARN),
        (["pass", "skip"], Verdict.PASS),
        (["skip", "skip"], Verdict.SKIP),
        ([], Verdict.SKIP),
    ],
)
def test_verdict_rule(verdicts: list[str], expected: Verdict) -> None:
    assert overall(verdicts) is expected
    assert run_verdict(verdicts) is expected


def test_a_warning_is_not_a_pass() -> None:
    results = [CheckResult("a", "pass"), CheckResult("b", "warn")]
    assert node_verdict(results) is Verdict.WARN
    assert summarise(results) == {"pass": 1, "warn": 1, "fail": 0, "skip": 0, "verdict": "warn"}


def test_unknown_verdict_is_refused() -> None:
    with pytest.raises(ValueError, match="verdict must be one of pass, warn, fail, skip"):
        CheckResult("a", "ok")


def test_result_is_frozen_and_round_trips() -> None:
    result = CheckResult(
        "gpu.count", Verdict.FAIL, component="node", measured=7, expected=8,
        remediation="reseat", evidence=Evidence("nvidia-smi -q -x", tuple(f"l{i}" for i in range(30))),
    )  # fmt: skip
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.verdict = Verdict.PASS  # type: ignore[misc]
    data = result.to_dict()
    assert data["verdict"] == "fail"
    assert len(data["evidence"]["lines"]) == 20
    assert CheckResult.from_dict(data) == result


def test_remediation_only_on_warn_and_fail() -> None:
    assert CheckResult("a", "pass", remediation="do x").remediation is None
    assert CheckResult("a", "warn", remediation="do x").remediation == "do x"


def test_sort_puts_failures_first_and_skips_last() -> None:
    results = [
        CheckResult("s", "skip"),
        CheckResult("p", "pass"),
        CheckResult("f", "fail"),
        CheckResult("w", "warn"),
    ]
    assert [r.id for r in sort_results(results)] == ["f", "w", "p", "s"]


def test_findings_are_the_fails_and_warns_as_verdicts_or_strings() -> None:
    from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import VERDICT_ORDER, is_finding

    assert [v.value for v in VERDICT_ORDER if is_finding(v)] == ["fail", "warn"]
    assert is_finding("fail") and is_finding("warn")
    assert not any(is_finding(v) for v in ("pass", "skip", None, "", "FAIL", 1, ["fail"]))
