"""GPU Operator filters: the FilterModule map, hostvars in, AnsibleFilterError on bad input."""

from __future__ import annotations

from typing import Any

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.filter.gpu_operator import (
    FilterModule,
    gpu_operator_node_labels,
    gpu_operator_values,
    pool_gpu_resources,
)

MIG = {"name": "mig7", "workload": "inference", "sharing": "mig", "mig": {"profiles": {"1g.18gb": 7}}}
FULL = {"name": "train", "workload": "batch", "sharing": "full-gpu"}
HOSTVARS: dict[str, dict[str, Any]] = {
    "g1": {"gpurack_pool": MIG, "nvidia_driver_managed_by": "host", "container_runtime_nvidia_enabled": True},
    "g2": {"gpurack_pool": FULL},
    "cp1": {},
}


def test_filter_module_maps_names_to_functions() -> None:
    assert FilterModule().filters() == {
        "gpu_operator_values": gpu_operator_values,
        "gpu_operator_node_labels": gpu_operator_node_labels,
        "pool_gpu_resources": pool_gpu_resources,
    }


def test_gpu_operator_values_reads_hostvars_of_the_given_hosts_only() -> None:
    values = gpu_operator_values(HOSTVARS, ["g1", "g2"], {"service_monitor_crd": True})
    assert values["driver"] == {"enabled": False}
    assert values["toolkit"] == {"enabled": False}
    assert values["mig"] == {"strategy": "mixed"}
    assert sorted(values["devicePlugin"]["config"]["data"]) == ["gpurack-default", "mig7", "train"]
    assert values["dcgmExporter"]["serviceMonitor"]["enabled"] is True


def test_gpu_operator_values_refusal_is_a_filter_error_naming_the_hosts() -> None:
    with pytest.raises(AnsibleFilterError, match=r"^gpu_operator_values: .*pool mig7: g1; pool train: g2"):
        gpu_operator_values(HOSTVARS, ["g1", "g2"], {"driver": True})
    with pytest.raises(AnsibleFilterError, match="host cp1 has no gpurack_pool"):
        gpu_operator_values(HOSTVARS, ["cp1"], {})
    with pytest.raises(AnsibleFilterError, match="unknown GPU Operator settings"):
        gpu_operator_values(HOSTVARS, ["g1"], {"drive": True})


def test_gpu_operator_node_labels_filter() -> None:
    assert gpu_operator_node_labels(MIG) == {
        "nvidia.com/device-plugin.config": "mig7",
        "nvidia.com/mig.config": "mig7",
    }
    with pytest.raises(AnsibleFilterError, match="expects a pool with a name"):
        gpu_operator_node_labels({"sharing": "mig"})


def test_pool_gpu_resources_filter() -> None:
    assert pool_gpu_resources(MIG, 8) == {"nvidia.com/mig-1g.18gb": 56}
    assert pool_gpu_resources(FULL, "2") == {"nvidia.com/gpu": 2}  # type: ignore[arg-type]  # Jinja passes text
    with pytest.raises(
        AnsibleFilterError, match=r"pool_gpu_resources: pool mig: .*mig needs pool.mig.profiles"
    ):
        pool_gpu_resources({"name": "mig", "sharing": "mig"}, 1)
    with pytest.raises(AnsibleFilterError, match="expects a pool mapping"):
        pool_gpu_resources("mig", 1)  # type: ignore[arg-type]
