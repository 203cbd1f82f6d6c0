# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""A Kubernetes Node as gpurack changes it (docs/node-labels.md, docs/day2.md).

`metadata`: the labels, taints and annotations gpurack owns and the plan to reach them;
`condition`: the GPUValidated condition; `maintenance`: the patch order and its limits;
`kube_api`: an API error as one line. Stdlib only.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.node.condition import (
    ConditionPlan,
    conditions_from_node,
    plan_condition,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node.kube_api import api_error_text
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

__all__ = [
    "ConditionPlan",
    "PlanError",
    "api_error_text",
    "conditions_from_node",
    "desired_errors",
    "maintenance_problems",
    "metadata_from_node",
    "node_metadata",
    "patch_order",
    "plan",
    "plan_condition",
    "pools_of",
]
