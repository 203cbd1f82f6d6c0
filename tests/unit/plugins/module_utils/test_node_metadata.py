"""Planning a Node's gpurack labels, taints and annotations: ownership, validation, idempotence."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import LabelError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node.metadata import (
    DEFAULT_REASON,
    MANAGED_LABELS,
    MANAGED_TAINTS,
    REASON_MAX,
    VALIDATION_FAILED,
    Plan,
    desired_errors,
    normalise_taint,
    plan,
    reason_text,
)

VALIDATING = {"key": "gpurack.io/validating", "effect": "NoSchedule"}
UNREACHABLE = {
    "key": "node.kubernetes.io/unreachable",
    "effect": "NoExecute",
    "timeAdded": "2026-01-01T00:00:00Z",
}
CORDON = {"key": "admin.example.com/maintenance", "value": "disk", "effect": "NoSchedule"}
RESERVED = {"key": "gpurack.io/reserved", "value": "research", "effect": "NoSchedule"}
KUBELET_LABELS = {"kubernetes.io/hostname": "gpu01", "kubernetes.io/os": "linux"}
WANT = {"gpurack.io/pool": "h200-train-a", "gpurack.io/fabric": "infiniband"}


def node(
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A Node's metadata as the module reads it: the kubelet's labels plus `labels`."""
    return {"labels": {**KUBELET_LABELS, **(labels or {})}, "annotations": annotations, "taints": taints}


def reapplied(steps: Plan) -> dict[str, Any]:
    """The Node after the plan, as the API would return it (empty taint values omitted)."""
    return {
        "labels": steps.result.labels,
        "annotations": steps.result.annotations,
        "taints": [{k: v for k, v in t.items() if v} for t in steps.result.taints],
    }


def assert_idempotent(
    steps: Plan, labels: dict[str, str], taints: list[dict[str, Any]], validation: str, reason: str = ""
) -> None:
    """Planning again on the result changes nothing and shows the same state."""
    again = plan(reapplied(steps), labels, taints, validation, reason)
    assert again.changed is False
    assert again.patch == {}
    assert again.before == again.after == steps.after


def test_plan_new_node_adds_labels_and_keeps_kubelet_labels() -> None:
    steps = plan(node(taints=[VALIDATING]), WANT, [RESERVED], "unknown")
    assert steps.changed is True
    assert steps.patch == {
        "metadata": {"labels": WANT},
        "spec": {
            "taints": [
                {"key": "gpurack.io/validating", "effect": "NoSchedule"},
                {"key": "gpurack.io/reserved", "value": "research", "effect": "NoSchedule"},
            ]
        },
    }
    assert steps.result.labels == {**KUBELET_LABELS, **WANT}
    assert_idempotent(steps, WANT, [RESERVED], "unknown")


def test_plan_updates_changed_value_and_removes_dropped_prefixed_label() -> None:
    current = node(
        labels={"gpurack.io/pool": "old", "gpurack.io/rack": "r12", "gpurack.io/fabric": "infiniband"}
    )
    steps = plan(current, WANT, [], "unknown")
    assert steps.patch == {
        "metadata": {"labels": {"gpurack.io/rack": None, "gpurack.io/pool": "h200-train-a"}}
    }
    assert steps.before["labels"] == {
        "gpurack.io/fabric": "infiniband",
        "gpurack.io/pool": "old",
        "gpurack.io/rack": "r12",
    }
    assert steps.after["labels"] == WANT
    assert_idempotent(steps, WANT, [], "unknown")


def test_plan_foreign_labels_and_taints_untouched() -> None:
    foreign = {"team.example.com/owner": "ml", "topology.kubernetes.io/zone": "a"}
    current = node(labels={**foreign, **WANT}, taints=[UNREACHABLE, CORDON])
    steps = plan(current, {}, [], "pass")
    assert steps.patch == {"metadata": {"labels": {"gpurack.io/fabric": None, "gpurack.io/pool": None}}}
    assert steps.result.labels == {**KUBELET_LABELS, **foreign}
    assert [t["key"] for t in steps.result.taints] == [UNREACHABLE["key"], CORDON["key"]]
    assert "team.example.com/owner" not in steps.before["labels"]


def test_plan_non_prefixed_label_tracked_in_annotation() -> None:
    labels = {**WANT, "node-role.kubernetes.io/gpu": ""}
    steps = plan(node(), labels, [], "unknown")
    assert steps.patch["metadata"]["labels"] == labels
    assert steps.patch["metadata"]["annotations"] == {MANAGED_LABELS: "node-role.kubernetes.io/gpu"}
    assert_idempotent(steps, labels, [], "unknown")


def test_plan_annotation_tracked_label_removed_when_dropped_from_desired() -> None:
    current = node(
        labels={**WANT, "node-role.kubernetes.io/gpu": "", "node-role.kubernetes.io/infer": ""},
        annotations={MANAGED_LABELS: "node-role.kubernetes.io/gpu,node-role.kubernetes.io/infer"},
    )
    labels = {**WANT, "node-role.kubernetes.io/gpu": ""}
    steps = plan(current, labels, [], "unknown")
    assert steps.patch == {
        "metadata": {
            "labels": {"node-role.kubernetes.io/infer": None},
            "annotations": {MANAGED_LABELS: "node-role.kubernetes.io/gpu"},
        }
    }
    assert_idempotent(steps, labels, [], "unknown")


def test_plan_last_tracked_label_dropped_removes_annotation() -> None:
    current = node(
        labels={"node-role.kubernetes.io/gpu": ""},
        annotations={MANAGED_LABELS: "node-role.kubernetes.io/gpu"},
    )
    steps = plan(current, {}, [], "unknown")
    assert steps.patch == {
        "metadata": {"labels": {"node-role.kubernetes.io/gpu": None}, "annotations": {MANAGED_LABELS: None}}
    }
    assert MANAGED_LABELS not in steps.result.annotations
    assert_idempotent(steps, {}, [], "unknown")


def test_plan_untracked_non_prefixed_label_is_not_owned() -> None:
    steps = plan(node(labels={"node-role.kubernetes.io/gpu": ""}), {}, [], "unknown")
    assert steps.changed is False
    assert steps.result.labels["node-role.kubernetes.io/gpu"] == ""


def test_plan_taints_replace_owned_keep_foreign_order() -> None:
    old = {"key": "gpurack.io/old", "effect": "NoSchedule"}
    nvidia = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    current = node(
        taints=[UNREACHABLE, old, VALIDATING, CORDON, {**RESERVED, "value": "prod"}],
        annotations={MANAGED_TAINTS: "example.com/gone"},
    )
    steps = plan(current, {}, [RESERVED, nvidia], "unknown")
    assert steps.patch["spec"]["taints"] == [
        UNREACHABLE,
        {"key": "gpurack.io/validating", "effect": "NoSchedule"},
        CORDON,
        RESERVED,
        nvidia,
    ]
    assert steps.patch["metadata"] == {"annotations": {MANAGED_TAINTS: "nvidia.com/gpu"}}
    assert steps.before["taints"] == [
        "gpurack.io/old:NoSchedule",
        "gpurack.io/validating:NoSchedule",
        "gpurack.io/reserved=prod:NoSchedule",
    ]
    assert steps.after["taints"] == [
        "gpurack.io/validating:NoSchedule",
        "gpurack.io/reserved=research:NoSchedule",
        "nvidia.com/gpu=present:NoSchedule",
    ]
    assert_idempotent(steps, {}, [RESERVED, nvidia], "unknown")


def test_plan_annotation_tracked_taint_removed_when_dropped() -> None:
    nvidia = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    current = node(taints=[nvidia, CORDON], annotations={MANAGED_TAINTS: "nvidia.com/gpu"})
    steps = plan(current, {}, [], "unknown")
    assert steps.patch == {"metadata": {"annotations": {MANAGED_TAINTS: None}}, "spec": {"taints": [CORDON]}}
    assert_idempotent(steps, {}, [], "unknown")


def test_plan_claimed_key_takes_over_taints_with_other_effects() -> None:
    current = node(taints=[{"key": "nvidia.com/gpu", "effect": "NoExecute"}])
    nvidia = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
    steps = plan(current, {}, [nvidia], "unknown")
    assert steps.patch["spec"] == {"taints": [nvidia]}
    assert_idempotent(steps, {}, [nvidia], "unknown")


def test_plan_removing_every_taint_sends_empty_list() -> None:
    steps = plan(node(taints=[RESERVED, VALIDATING]), {}, [], "pass")
    assert steps.patch["spec"] == {"taints": []}


def test_plan_unchanged_taint_keeps_time_added() -> None:
    desired = {**RESERVED, "effect": "NoExecute"}
    timed = {**desired, "timeAdded": "2026-01-02T03:04:05Z"}
    old = {"key": "gpurack.io/old", "effect": "NoSchedule"}
    steps = plan(node(taints=[timed, old]), {}, [desired], "unknown")
    assert steps.patch["spec"]["taints"] == [timed]


def test_plan_validation_pass_lifts_taint_and_annotation() -> None:
    current = node(
        labels=WANT, taints=[VALIDATING, CORDON], annotations={VALIDATION_FAILED: "gpu.count: 1 of 8"}
    )
    steps = plan(current, WANT, [], "pass")
    assert steps.patch == {
        "metadata": {"annotations": {VALIDATION_FAILED: None}},
        "spec": {"taints": [CORDON]},
    }
    assert steps.before["annotations"] == {VALIDATION_FAILED: "gpu.count: 1 of 8"}
    assert steps.after == {"labels": WANT, "taints": [], "annotations": {}}
    assert_idempotent(steps, WANT, [], "pass")


def test_plan_validation_fail_adds_taint_and_reason() -> None:
    steps = plan(
        node(labels=WANT, taints=[CORDON]), WANT, [], "fail", "gpu.count:\n 1 GPUs found, expected 8"
    )
    assert steps.patch == {
        "metadata": {"annotations": {VALIDATION_FAILED: "gpu.count: 1 GPUs found, expected 8"}},
        "spec": {"taints": [CORDON, {"key": "gpurack.io/validating", "effect": "NoSchedule"}]},
    }
    assert_idempotent(steps, WANT, [], "fail", "gpu.count: 1 GPUs found, expected 8")


def test_plan_validation_fail_keeps_present_taint_and_updates_reason() -> None:
    current = node(taints=[VALIDATING], annotations={VALIDATION_FAILED: "old"})
    steps = plan(current, {}, [], "fail", "")
    assert steps.patch == {"metadata": {"annotations": {VALIDATION_FAILED: DEFAULT_REASON}}}


@pytest.mark.parametrize(
    "current",
    [
        node(taints=[VALIDATING], annotations={VALIDATION_FAILED: "earlier failure"}),
        node(taints=[CORDON]),
        node(annotations={VALIDATION_FAILED: "stale"}),
    ],
)
def test_plan_validation_unknown_leaves_taint_and_annotation(current: dict[str, Any]) -> None:
    steps = plan(current, {}, [], "unknown", "ignored")
    assert steps.changed is False
    assert steps.result.annotations == (current["annotations"] or {})
    assert [t["key"] for t in steps.result.taints] == [t["key"] for t in current["taints"] or []]


def test_plan_converged_node_is_unchanged() -> None:
    current = node(labels=WANT, taints=[{**UNREACHABLE}, RESERVED])
    steps = plan(current, WANT, [RESERVED], "pass")
    assert (steps.changed, steps.patch) == (False, {})
    assert steps.before == steps.after


def test_plan_desired_validating_taint_is_refused() -> None:
    with pytest.raises(ValueError, match=r"gpurack.io/validating follows the validation verdict"):
        plan(node(), {}, [{"key": "gpurack.io/validating", "effect": "NoSchedule"}], "unknown")


def test_plan_unknown_validation_value_is_refused() -> None:
    with pytest.raises(ValueError, match="validation must be one of pass, fail, unknown"):
        plan(node(), {}, [], "maybe")


@pytest.mark.parametrize(
    ("labels", "taints", "error"),
    [
        ({"gpurack.io/pool": "no spaces"}, [], "label value 'no spaces'"),
        ({}, [{"key": "gpurack.io/x", "effect": "Sometimes"}], "taints[0]: effect must be one of"),
        ({}, [{"key": "gpurack.io/x", "effect": "NoSchedule", "color": "red"}], "unknown fields color"),
        ({}, [RESERVED, RESERVED], "gpurack.io/reserved:NoSchedule is listed twice"),
        ({}, ["gpurack.io/x:NoSchedule"], "taints[0] must be a mapping"),
    ],
)
def test_desired_errors_names_the_problem(labels: dict[str, str], taints: list[Any], error: str) -> None:
    errors = desired_errors(labels, taints)
    assert any(error in e for e in errors), errors
    with pytest.raises(LabelError):
        plan(node(), labels, taints, "unknown")


def test_desired_errors_allows_node_role_labels() -> None:
    assert desired_errors({"node-role.kubernetes.io/gpu": ""}, [RESERVED]) == []


def test_desired_errors_null_label_value_checks_only_the_key() -> None:
    # null: leave the label as it is (a cabled node the fabric read did not see), as plan does.
    assert desired_errors({"network.topology.nvidia.com/leaf": None}, []) == []
    assert desired_errors({"bad key!": None}, []) != []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"key": "a/b", "effect": "NoSchedule"}, {"key": "a/b", "value": "", "effect": "NoSchedule"}),
        (
            {"key": "a/b", "value": None, "effect": "NoSchedule"},
            {"key": "a/b", "value": "", "effect": "NoSchedule"},
        ),
        (
            {"key": "a/b", "value": "v", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"},
            {"key": "a/b", "value": "v", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"},
        ),
        (
            {"key": "a/b", "effect": "NoExecute", "time_added": None, "extra": 1},
            {"key": "a/b", "value": "", "effect": "NoExecute"},
        ),
    ],
)
def test_normalise_taint_fills_value_and_drops_extra_fields(
    raw: dict[str, Any], expected: dict[str, str]
) -> None:
    assert normalise_taint(raw) == expected


def test_normalise_taint_refuses_taint_without_effect() -> None:
    with pytest.raises(LabelError, match="must be a mapping with a key and an effect"):
        normalise_taint({"key": "a/b"})


def test_plan_api_taints_without_value_compare_equal_to_desired() -> None:
    steps = plan(
        node(taints=[{"key": "gpurack.io/reserved", "effect": "NoSchedule", "timeAdded": None}]),
        {},
        [{"key": "gpurack.io/reserved", "value": "", "effect": "NoSchedule"}],
        "unknown",
    )
    assert steps.changed is False


def test_reason_text_one_line_bounded_with_default() -> None:
    assert reason_text("a\n  b\tc ") == "a b c"
    assert reason_text("") == DEFAULT_REASON
    long = reason_text("x" * 5000)
    assert len(long) == REASON_MAX
    assert long.endswith("...")


LEAF = "network.topology.nvidia.com/leaf"
SPINE = "network.topology.nvidia.com/spine"


def test_plan_a_label_desired_as_none_stays_as_it_is_and_stays_owned() -> None:
    """A node the fabric read did not see keeps its topology; an owned label left out goes."""
    current = node(
        labels={**WANT, LEAF: "leaf1", SPINE: "spine1"},
        annotations={MANAGED_LABELS: f"{LEAF},{SPINE}"},
    )
    kept = {**WANT, LEAF: None, SPINE: None}
    steps = plan(current, kept, [], "unknown")
    assert steps.changed is False and steps.result.labels[LEAF] == "leaf1"
    assert_idempotent(steps, {**WANT, LEAF: "leaf1", SPINE: "spine1"}, [], "unknown")
    dropped = plan(current, {**WANT, LEAF: None}, [], "unknown")  # the spine is no longer known
    assert dropped.patch["metadata"] == {"labels": {SPINE: None}, "annotations": {MANAGED_LABELS: LEAF}}
    fresh = plan(node(labels=WANT), {**WANT, LEAF: None}, [], "unknown")  # nothing to keep: nothing set
    assert fresh.changed is False and LEAF not in fresh.result.labels
