# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The node labels gpurack derives (docs/labels.md).

`derive`: a node's labels and taints from its facts and its pool; `sharing`: GPU sharing
(time-slicing, MIG) and the resources a pool advertises; `topology`: where the node sits in the
network (leaf, spine), from the fabric read or the inventory. Kubernetes' name rules themselves are
the `names` module beside this package. Stdlib only.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import (
    PREFIX,
    LabelError,
    accelerator_label,
    label_errors,
    node_labels,
    pool_errors,
    pool_taints,
    topology_label,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.sharing import (
    SharingError,
    pool_gpu_resources,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.topology import (
    LEAF_KEY,
    SPINE_KEY,
    TOPOLOGY_LEVELS,
    TopologyError,
    known_levels,
    level_value,
    topology_labels,
)

__all__ = [
    "LEAF_KEY",
    "PREFIX",
    "SPINE_KEY",
    "TOPOLOGY_LEVELS",
    "LabelError",
    "SharingError",
    "TopologyError",
    "accelerator_label",
    "known_levels",
    "label_errors",
    "level_value",
    "node_labels",
    "pool_errors",
    "pool_gpu_resources",
    "pool_taints",
    "topology_label",
    "topology_labels",
]
