# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The node labels gpurack derives (docs/labels.md).

`derive`: a node's labels and taints from its facts and its pool; `sharing`: GPU sharing
(time-slicing, MIG) and the resources a pool advertises. Kubernetes' name rules themselves are
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

__all__ = [
    "PREFIX",
    "LabelError",
    "SharingError",
    "accelerator_label",
    "label_errors",
    "node_labels",
    "pool_errors",
    "pool_gpu_resources",
    "pool_taints",
    "topology_label",
]
