"""The one skip policy: a node none of whose own checks was assessed is "not assessed", whatever
its inputs said; `gpurack validate` exits 2 and the roles never admit it (module_utils/_results)."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import (
    INPUT_COMPONENT,
    not_assessed,
)


def _result(verdict: str, reason: str = "", component: str = "node") -> dict[str, Any]:
    return {"id": f"x.{verdict}", "verdict": verdict, "reason": reason, "component": component}


@pytest.mark.parametrize(
    ("results", "why"),
    [
        ([], "nothing was assessed, no check ran"),
        (
            [
                _result("skip", "GPU facts unavailable"),
                _result("skip", "GPU facts unavailable"),
                _result("skip", ""),
            ],
            "nothing was assessed, all 3 checks skipped: GPU facts unavailable",
        ),
        # An input warning (an empty expectations file) assesses nothing about the node.
        (
            [_result("warn", "expects nothing", INPUT_COMPONENT), _result("skip", "no NICs")],
            "nothing was assessed, all 1 checks skipped: no NICs",
        ),
        ([_result("warn", "x", INPUT_COMPONENT)], "nothing was assessed, no check ran"),
    ],
)
def test_a_node_none_of_whose_checks_ran_is_not_assessed(results: list[dict[str, Any]], why: str) -> None:
    assert not_assessed(results) == why


@pytest.mark.parametrize("verdict", ["pass", "warn", "fail"])
def test_one_assessed_check_makes_the_node_assessed(verdict: str) -> None:
    assert not_assessed([_result("skip", "a"), _result(verdict)]) is None


def test_many_reasons_are_shown_five_and_counted() -> None:
    why = not_assessed([_result("skip", f"reason {i}") for i in range(8)])
    assert why is not None and why.endswith("reason 4; and 3 more reasons")
