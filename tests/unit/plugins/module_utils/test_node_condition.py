"""Planning the Node condition GpurackValidated: status, reason, message, times, idempotence."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node.condition import (
    CONDITION_TYPE,
    PASSED_MESSAGE,
    find_condition,
    plan_condition,
    rfc3339,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node.metadata import (
    DEFAULT_REASON,
    REASON_MAX,
)

T0, T1, T2 = "2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z", "2026-12-01T12:00:00Z"
READY = {"type": "Ready", "status": "True", "reason": "KubeletReady", "lastTransitionTime": T0}


def failed(message: str = "gpu.count: 1 GPUs found, expected 8", at: str = T0) -> dict[str, Any]:
    return {
        "type": CONDITION_TYPE,
        "status": "False",
        "reason": "ChecksFailed",
        "message": message,
        "lastHeartbeatTime": at,
        "lastTransitionTime": at,
    }


def test_a_fail_on_a_node_without_the_condition_adds_it() -> None:
    steps = plan_condition([READY], "fail", "gpu.count: 1 GPUs found, expected 8", T1)
    assert steps.changed is True
    assert steps.patch == {"status": {"conditions": [failed(at=T1)]}}
    assert steps.before is None
    assert steps.after == {
        "type": CONDITION_TYPE,
        "status": "False",
        "reason": "ChecksFailed",
        "message": "gpu.count: 1 GPUs found, expected 8",
    }


def test_the_same_verdict_again_writes_nothing_not_even_a_heartbeat() -> None:
    steps = plan_condition([READY, failed()], "fail", "gpu.count: 1 GPUs found, expected 8", T2)
    assert steps.changed is False
    assert steps.patch == {}
    assert steps.condition == failed()
    assert steps.before == steps.after


def test_a_new_message_with_the_same_status_keeps_the_transition_time() -> None:
    steps = plan_condition([failed()], "fail", "nvlink.count: 12 links, expected 18", T1)
    assert steps.changed is True
    [condition] = steps.patch["status"]["conditions"]
    assert condition["message"] == "nvlink.count: 12 links, expected 18"
    assert (condition["lastTransitionTime"], condition["lastHeartbeatTime"]) == (T0, T1)


def test_a_pass_after_a_fail_is_a_transition() -> None:
    steps = plan_condition([failed()], "pass", "", T1)
    [condition] = steps.patch["status"]["conditions"]
    assert condition == {
        "type": CONDITION_TYPE,
        "status": "True",
        "reason": "ChecksPassed",
        "message": PASSED_MESSAGE,
        "lastHeartbeatTime": T1,
        "lastTransitionTime": T1,
    }


def test_unknown_leaves_the_condition_as_it_is() -> None:
    steps = plan_condition([failed()], "unknown", "", T1)
    assert (steps.changed, steps.patch, steps.condition) == (False, {}, failed())
    assert plan_condition([], "unknown", "", T1).condition is None


def test_the_message_is_one_bounded_line() -> None:
    [condition] = plan_condition([], "fail", "a\n  b " + "x" * 2000, T1).patch["status"]["conditions"]
    assert "\n" not in condition["message"]
    assert len(condition["message"]) == REASON_MAX
    [empty] = plan_condition([], "fail", "", T1).patch["status"]["conditions"]
    assert empty["message"] == DEFAULT_REASON


def test_times_from_the_python_client_compare_in_rfc3339() -> None:
    assert rfc3339("2026-12-01T10:00:00+00:00") == T0
    client = {**failed(), "lastTransitionTime": "2026-12-01T10:00:00+00:00", "lastProbeTime": None}
    assert find_condition([client]) == failed()
    [condition] = plan_condition([client], "fail", "other", T1).patch["status"]["conditions"]
    assert condition["lastTransitionTime"] == T0


def test_a_bad_validation_is_refused() -> None:
    with pytest.raises(ValueError, match="validation must be one of pass, fail, unknown"):
        plan_condition([], "maybe", "", T1)
