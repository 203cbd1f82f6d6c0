# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Node-pool label filters: node_labels, pool_taints, pool_errors, label_valid, topology_labels
(docs: sidecar .yml files)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.module_utils import labels as _labels


def node_labels(facts: Mapping[str, Any], pool: Mapping[str, Any]) -> dict[str, str]:
    """The node's gpurack.io/* labels from its facts (gpurack_gpu, gpurack_nic) and its pool."""
    try:
        return _labels.node_labels(facts, pool)
    except _labels.LabelError as exc:
        raise AnsibleFilterError(
            f"node_labels expects facts with gpurack_gpu and gpurack_nic and a pool "
            f"{{name, workload, sharing, labels}}: {exc}"
        ) from exc


def pool_taints(pool: Mapping[str, Any]) -> list[dict[str, str]]:
    """The pool's taints plus gpurack.io/validating:NoSchedule."""
    try:
        return _labels.pool_taints(pool)
    except _labels.LabelError as exc:
        raise AnsibleFilterError(
            f"pool_taints expects a pool with a taints list of {{key, value, effect}}: {exc}"
        ) from exc


def pool_errors(pool: Any) -> list[str]:
    """Every problem with a pool definition (gpurack_pool), each naming its key; [] when valid."""
    return _labels.pool_errors(pool)


def label_valid(labels: Mapping[str, Any], allow_restricted: bool = False) -> bool:
    """True when every key and value of a labels mapping is valid Kubernetes label syntax."""
    if not isinstance(labels, Mapping):
        raise AnsibleFilterError(
            f"label_valid expects a mapping of label keys to values, got {type(labels).__name__}"
        )
    return not _labels.label_errors(labels, allow_restricted=allow_restricted)


def topology_labels(
    seen: Mapping[str, Any] | None, rack: Any = None, block: Any = None, cabled: bool = False
) -> dict[str, str | None]:
    """The node's topology labels (network.topology.nvidia.com/leaf, /spine) from the fabric
    read's placement, or from gpurack_rack and gpurack_block; None leaves a label as it is."""
    if seen is not None and not isinstance(seen, Mapping):
        raise AnsibleFilterError(f"topology_labels expects a placement mapping, got {type(seen).__name__}")
    try:
        return _labels.topology_labels(seen or None, rack, block, bool(cabled))
    except _labels.TopologyError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    """gpurack.bootstrap label filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "node_labels": node_labels,
            "pool_taints": pool_taints,
            "pool_errors": pool_errors,
            "label_valid": label_valid,
            "topology_labels": topology_labels,
        }
