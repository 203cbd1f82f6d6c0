# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""GPU Operator filters: gpu_operator_values, gpu_operator_node_labels, pool_gpu_resources (docs: *.yml)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.module_utils import labels as _labels
from ansible_collections.gpurack.bootstrap.plugins.module_utils import platform as _platform


def gpu_operator_values(
    hostvars: Mapping[str, Mapping[str, Any]], hosts: Sequence[str], settings: Mapping[str, Any]
) -> dict[str, Any]:
    """The GPU Operator chart's values for `hosts` (the GPU nodes) from their inventory variables."""
    try:
        return _platform.gpu_operator_values(
            _platform.operator_hosts(hostvars, list(hosts)), _platform.settings_from_mapping(settings)
        )
    except _platform.GpuOperatorInputError as exc:
        raise AnsibleFilterError(f"gpu_operator_values: {exc}") from exc


def gpu_operator_node_labels(pool: Mapping[str, Any]) -> dict[str, str]:
    """The node labels that select the node's device-plugin and MIG configs from its pool."""
    if not isinstance(pool, Mapping) or not pool.get("name"):
        raise AnsibleFilterError(f"gpu_operator_node_labels expects a pool with a name, got {pool!r}")
    return _platform.operator_node_labels(pool)


def pool_gpu_resources(pool: Mapping[str, Any], gpus: int, mig_strategy: str = "mixed") -> dict[str, int]:
    """The extended resources a node of `pool` with `gpus` GPUs advertises, as the device plugin does."""
    if not isinstance(pool, Mapping):
        raise AnsibleFilterError(f"pool_gpu_resources expects a pool mapping, got {type(pool).__name__}")
    try:
        return _labels.pool_gpu_resources(pool, int(gpus), mig_strategy)
    except (_labels.SharingError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"pool_gpu_resources: {exc}") from exc


class FilterModule:
    """gpurack.bootstrap GPU Operator filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "gpu_operator_values": gpu_operator_values,
            "gpu_operator_node_labels": gpu_operator_node_labels,
            "pool_gpu_resources": pool_gpu_resources,
        }
