"""Day 2 planning: whether a Node may be taken out of service, and the rolling patch's batches
that keep every pool's floor of nodes in service."""

from __future__ import annotations

from typing import Any

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.filter.maintenance import patch_batches
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node.maintenance import (
    PlanError,
    batch_size,
    maintenance_problems,
)


def _node(
    *,
    ready: str = "True",
    unschedulable: bool = False,
    taints: tuple[str, ...] = (),
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "gpu01",
            "annotations": dict(annotations or {}),
        },
        "spec": {
            "unschedulable": unschedulable,
            "taints": [{"key": k, "effect": "NoSchedule"} for k in taints],
        },
        "status": {"conditions": [{"type": "Ready", "status": ready, "message": "kubelet stopped posting"}]},
    }


def test_a_ready_validated_schedulable_node_may_be_taken_out() -> None:
    assert maintenance_problems(_node()) == []


def test_each_reason_against_is_one_line() -> None:
    node = _node(ready="Unknown", unschedulable=True, taints=("gpurack.io/validating",))
    node["metadata"]["annotations"]["gpurack.io/validation-failed"] = "gpu.count: 7 of 8"
    assert maintenance_problems(node) == [
        "it is cordoned by someone else (no gpurack.io/maintenance annotation)",
        "it is not Ready (kubelet stopped posting)",
        "its last validation did not pass (gpu.count: 7 of 8)",
    ]
    assert maintenance_problems(None) == ["it is not in the cluster"]


def test_a_node_gpurack_took_out_is_resumed_whatever_its_state() -> None:
    node = _node(
        ready="False",
        unschedulable=True,
        taints=("gpurack.io/validating",),
        annotations={"gpurack.io/maintenance": "by=gpurack"},
    )
    assert maintenance_problems(node) == []


def test_a_failed_validated_condition_counts_without_the_taint() -> None:
    node = _node()
    node["status"]["conditions"].append(
        {"type": "GpurackValidated", "status": "False", "message": "nvlink down"}
    )
    assert maintenance_problems(node) == ["its last validation did not pass (nvlink down)"]


@pytest.mark.parametrize(("serial", "total", "size"), [(1, 9, 1), ("3", 9, 3), ("20%", 9, 1), ("50%", 9, 4)])
def test_serial_is_a_number_or_a_share(serial: object, total: int, size: int) -> None:
    assert batch_size(serial, total) == size


@pytest.mark.parametrize(
    "serial", ["0", "-1", "a lot", True, "1.5", "9" * 5000, [1], {"a": 1}, None, 2.0, "\u0663"]
)
def test_a_bad_serial_is_refused(serial: object) -> None:
    with pytest.raises(PlanError, match="serial must be"):
        batch_size(serial, 4)


def _hostvars(pools: dict[str, tuple[int, int]]) -> dict[str, dict[str, Any]]:
    """`size` hosts per pool, each pool with its min_available."""
    return {
        f"{name}-{i}": {"gpurack_pool": {"name": name, "min_available": floor}}
        for name, (size, floor) in pools.items()
        for i in range(1, size + 1)
    }


def test_batches_mix_pools_and_never_take_a_pool_below_its_floor() -> None:
    hostvars = _hostvars({"h100": (4, 2), "h200": (2, 1)})
    batches = patch_batches(hostvars, sorted(hostvars), 3)
    assert batches == [["h100-1", "h200-1", "h100-2"], ["h100-3", "h200-2", "h100-4"]]
    for batch in batches:
        assert sum(h.startswith("h100") for h in batch) <= 2 and sum(h.startswith("h200") for h in batch) <= 1


def test_a_floor_smaller_batch_than_serial_when_only_one_pool_is_left() -> None:
    hostvars = _hostvars({"h100": (3, 2)})
    assert patch_batches(hostvars, sorted(hostvars), "100%") == [["h100-1"], ["h100-2"], ["h100-3"]]


def test_only_the_chosen_pools_are_patched() -> None:
    hostvars = _hostvars({"h100": (2, 0), "h200": (2, 0)})
    assert patch_batches(hostvars, sorted(hostvars), 4, ["h200"]) == [["h200-1", "h200-2"]]
    assert patch_batches(hostvars, sorted(hostvars), 4, "h200") == [["h200-1", "h200-2"]]
    # An AWX survey's text answer: names separated by commas or new lines.
    assert patch_batches(hostvars, sorted(hostvars), 2, "h200,\nh100") == [
        ["h100-1", "h200-1"], ["h100-2", "h200-2"]
    ]  # fmt: skip


def test_a_limit_patches_only_its_hosts_and_keeps_the_whole_pool_floor() -> None:
    hostvars = _hostvars({"h100": (3, 2)})
    # One of three nodes may be out: limited to two, they still go one at a time.
    assert patch_batches(hostvars, sorted(hostvars), 2, [], ["h100-1", "h100-3"]) == [["h100-1"], ["h100-3"]]
    # Counting only the limited host would make a 1-node pool with floor 2 and refuse the plan.
    assert patch_batches(hostvars, sorted(hostvars), 1, [], ["h100-2"]) == [["h100-2"]]


@pytest.mark.parametrize(
    ("pools", "chosen", "message"),
    [
        ({"h200": (1, 1)}, [], "pool h200 has 1 node\\(s\\) and min_available 1: none may be out"),
        ({"h100": (2, 0)}, ["b200"], "no node is in pool\\(s\\) b200 \\(pools: h100\\)"),
        ({"h100": (2, -1)}, [], "pool h100: min_available must be a whole number of at least 0, got -1"),
    ],
)
def test_a_plan_that_cannot_keep_a_floor_is_refused(
    pools: dict[str, tuple[int, int]], chosen: list[str], message: str
) -> None:
    hostvars = _hostvars(pools)
    with pytest.raises(AnsibleFilterError, match=f"patch_batches: {message}"):
        patch_batches(hostvars, sorted(hostvars), 1, chosen)


@pytest.mark.parametrize(
    ("hostvars", "pools", "message"),
    [
        (
            {"gpu9": {"gpurack_pool": {"name": ["h100"]}}},
            [],
            r"gpu9: gpurack_pool\.name must be text, got \['h100'\]",
        ),
        ({"gpu9": {"gpurack_pool": {"name": {"a": 1}}}}, [], r"gpu9: gpurack_pool\.name must be text"),
        (
            {"gpu9": {"gpurack_pool": {"name": "h100"}}},
            [["h100"]],
            r"the pools to patch must be names \(text\)",
        ),
        (
            {"gpu9": {"gpurack_pool": {"name": "h100"}}},
            [{"a": 1}],
            r"the pools to patch must be names \(text\)",
        ),
    ],
)
def test_a_pool_or_a_chosen_pool_of_the_wrong_type_is_refused(
    hostvars: dict[str, Any], pools: list[Any], message: str
) -> None:
    with pytest.raises(AnsibleFilterError, match=f"patch_batches: {message}"):
        patch_batches(hostvars, sorted(hostvars), 1, pools)


def test_a_host_without_a_pool_is_refused() -> None:
    with pytest.raises(AnsibleFilterError, match=r"gpu9 has no gpurack_pool\.name"):
        patch_batches({"gpu9": {}}, ["gpu9"], 1)
