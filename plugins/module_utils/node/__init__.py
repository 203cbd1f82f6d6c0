# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""A Kubernetes Node as gpurack changes it (docs/node-labels.md, docs/day2.md).

`metadata`: the labels, taints and annotations gpurack owns and the plan to reach them;
`sync`: plan, patch and re-plan on a conflict; `condition`: the GPUValidated condition;
`maintenance`: the patch order and its limits; `kube_api`: the client from a kubeconfig and an
API error as one line. Stdlib only (the kubernetes client is imported when a client is made).
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.node.condition import (
    ConditionPlan,
    conditions_from_node,
    plan_condition,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node.kube_api import (
    KubeClient,
    KubeconfigError,
    api_error_text,
    core_v1,
    missing_node_text,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node.maintenance import (
    PlanError,
    maintenance_problems,
    patch_order,
    pools_of,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node.metadata import (
    desired_errors,
    metadata_from_node,
    node_metadata,
    plan,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node.sync import (
    ConflictError,
    Desired,
    Synced,
    sync_metadata,
)

__all__ = [
    "ConditionPlan",
    "ConflictError",
    "Desired",
    "KubeClient",
    "KubeconfigError",
    "PlanError",
    "Synced",
    "api_error_text",
    "conditions_from_node",
    "core_v1",
    "desired_errors",
    "maintenance_problems",
    "metadata_from_node",
    "missing_node_text",
    "node_metadata",
    "patch_order",
    "plan",
    "plan_condition",
    "pools_of",
    "sync_metadata",
]
