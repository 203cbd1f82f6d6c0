"""k8s_apply's report of one kubernetes.core.k8s run over a list of objects, object by object."""

from __future__ import annotations

from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.applied import object_name, summarise

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "alpha"}}
QUOTA = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "alpha", "namespace": "alpha"}}
FLAVOR = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "h100"}}


def run_of(*outcomes: dict[str, Any]) -> dict[str, Any]:
    """kubernetes.core.k8s's result for several definitions."""
    return {"changed": any(o.get("changed") for o in outcomes), "result": {"results": list(outcomes)}}


def test_names_say_kind_namespace_and_name() -> None:
    assert object_name(QUOTA) == "ResourceQuota alpha/alpha"
    assert object_name(FLAVOR) == "ResourceFlavor h100"


def test_nothing_changed_says_so() -> None:
    out = summarise(
        [NAMESPACE, QUOTA], run_of({"changed": False}, {"changed": False}), check_mode=False, diff=True
    )
    assert out == {"changed": False, "changed_objects": [], "objects": 2, "msg": "all 2 objects as wanted"}


def test_changed_objects_are_named_with_a_diff_each_under_their_name() -> None:
    quota_diff = {
        "before": {"spec": {"hard": {"requests.nvidia.com/gpu": "4"}}},
        "after": {"spec": {"hard": {"requests.nvidia.com/gpu": "8"}}},
    }
    out = summarise(
        [NAMESPACE, QUOTA],
        run_of({"changed": False}, {"changed": True, "diff": quota_diff}),
        check_mode=False,
        diff=True,
    )
    assert out["changed"] is True
    assert out["changed_objects"] == ["ResourceQuota alpha/alpha"]
    assert out["msg"] == "changed 1 of 2: ResourceQuota alpha/alpha"
    assert out["diff"] == [
        {
            "before_header": "ResourceQuota alpha/alpha",
            "after_header": "ResourceQuota alpha/alpha",
            **quota_diff,
        }
    ]


def test_without_diff_mode_no_diff_is_returned() -> None:
    out = summarise(
        [QUOTA], {"changed": True, "diff": {"before": {}, "after": {"a": 1}}}, check_mode=False, diff=False
    )
    assert "diff" not in out and out["changed_objects"] == ["ResourceQuota alpha/alpha"]


def test_one_object_result_is_not_nested() -> None:
    out = summarise(
        [FLAVOR], {"changed": True, "result": {"kind": "ResourceFlavor"}}, check_mode=False, diff=False
    )
    assert out["changed_objects"] == ["ResourceFlavor h100"]


def test_check_mode_counts_an_object_in_a_namespace_the_list_creates_as_a_change() -> None:
    missing = {
        "error": {"msg": 'Failed to create object: b\'{"message":"namespaces \\"alpha\\" not found"}\''}
    }
    out = summarise([NAMESPACE, QUOTA], run_of({"changed": True}, missing), check_mode=True, diff=False)
    assert "failed" not in out
    assert out["changed_objects"] == ["Namespace alpha", "ResourceQuota alpha/alpha"]
    assert out["msg"].startswith("would change 2 of 2")


def test_a_failed_object_fails_the_task_after_every_object_was_tried() -> None:
    refused = {"error": {"msg": "admission webhook denied the request"}}
    out = summarise(
        [NAMESPACE, QUOTA, FLAVOR],
        run_of({"changed": True}, refused, {"changed": True}),
        check_mode=False,
        diff=False,
    )
    assert out["failed"] is True
    assert out["changed_objects"] == ["Namespace alpha", "ResourceFlavor h100"]
    assert out["failed_objects"] == ["ResourceQuota alpha/alpha: admission webhook denied the request"]
    assert (
        out["msg"] == "1 of 3 objects failed: ResourceQuota alpha/alpha: admission webhook denied the request"
    )


def test_the_same_namespace_error_outside_check_mode_is_a_failure() -> None:
    missing = {"error": {"msg": "namespaces alpha not found"}}
    out = summarise([NAMESPACE, QUOTA], run_of({"changed": True}, missing), check_mode=False, diff=False)
    assert out["failed"] is True


def test_a_module_that_failed_before_any_object_passes_its_message_on() -> None:
    out = summarise(
        [NAMESPACE, QUOTA], {"failed": True, "msg": "Invalid kube-config file"}, check_mode=False, diff=False
    )
    assert out == {"failed": True, "changed": False, "msg": "Invalid kube-config file"}


def test_a_result_count_that_does_not_match_is_an_error() -> None:
    out = summarise([NAMESPACE, QUOTA], run_of({"changed": False}), check_mode=False, diff=False)
    assert out["failed"] is True and "1 results for 2 objects" in out["msg"]
