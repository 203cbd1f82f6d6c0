"""Label filters: the FilterModule map and AnsibleFilterError on bad input."""

from __future__ import annotations

from typing import Any

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.filter.labels import (
    FilterModule,
    label_valid,
    node_labels,
    pool_errors,
    pool_taints,
    topology_labels,
)

POOL = {"name": "infer-l4", "workload": "inference", "sharing": "time-slicing"}
FACTS: dict[str, Any] = {
    "gpurack_gpu": {
        "available": True,
        "gpus": [
            {"index": 0, "name": "NVIDIA L4", "pci_device_id": "0x27b8", "nvlinks": [], "nvlink_source": None}
        ],
    },
    "gpurack_nic": {"available": True, "net": [{"name": "eth0"}], "rdma": []},
}


def test_filter_module_maps_names_to_functions() -> None:
    assert FilterModule().filters() == {
        "node_labels": node_labels,
        "pool_taints": pool_taints,
        "pool_errors": pool_errors,
        "label_valid": label_valid,
        "topology_labels": topology_labels,
    }


def test_node_labels_filter_returns_labels() -> None:
    labels = node_labels(FACTS, POOL)
    assert labels["gpurack.io/accelerator"] == "l4-24gb"
    assert labels["gpurack.io/topology"] == "1gpu-pcie-single"
    assert labels["gpurack.io/fabric"] == "ethernet"
    assert labels["gpurack.io/sharing"] == "time-slicing"


@pytest.mark.parametrize(
    ("facts", "pool", "message"),
    [
        (FACTS, {**POOL, "workload": "web"}, "node_labels expects .* pool.workload must be one of"),
        ("gpu", POOL, "node_labels expects .* facts must be a mapping"),
    ],
)
def test_node_labels_filter_bad_input_raises_filter_error(facts: Any, pool: Any, message: str) -> None:
    with pytest.raises(AnsibleFilterError, match=message):
        node_labels(facts, pool)


def test_pool_taints_filter_bad_effect_raises_filter_error() -> None:
    with pytest.raises(AnsibleFilterError, match=r"pool_taints expects .* effect must be one of"):
        pool_taints({"taints": [{"key": "a", "effect": "Sometimes"}]})


def test_pool_taints_filter_adds_validating_taint() -> None:
    assert pool_taints(POOL)[-1] == {"key": "gpurack.io/validating", "value": "", "effect": "NoSchedule"}


def test_label_valid_filter() -> None:
    assert label_valid({"gpurack.io/rack": "r12"}) is True
    assert label_valid({"gpurack.io/rack": "rack 12"}) is False
    assert label_valid({"kubernetes.io/arch": "amd64"}) is False
    assert label_valid({"kubernetes.io/arch": "amd64"}, True) is True
    with pytest.raises(AnsibleFilterError, match="label_valid expects a mapping"):
        label_valid(["gpurack.io/rack=r12"])  # type: ignore[arg-type]


def test_pool_errors_filter_names_each_key() -> None:
    assert pool_errors(POOL) == []
    errors = pool_errors({**POOL, "wrkload": "inference", "name": "Infer L4"})
    assert [e.split(":")[0] for e in errors] == ["pool", "pool.name"]
    assert pool_errors("infer-l4") == ["pool must be a mapping with name, workload and sharing, got str"]


def test_topology_labels_filter_refuses_a_bad_rack_with_its_name() -> None:
    assert topology_labels({"leaf": ["leaf1"], "spine": ["spine1"]}) == {
        "network.topology.nvidia.com/leaf": "leaf1",
        "network.topology.nvidia.com/spine": "spine1",
    }
    with pytest.raises(AnsibleFilterError, match="gpurack_block must be a label value"):
        topology_labels(None, "r1", "block 7")
    with pytest.raises(AnsibleFilterError, match="expects a placement mapping"):
        topology_labels(["leaf1"])  # type: ignore[arg-type]
