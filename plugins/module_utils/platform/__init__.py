# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The platform layer's one code path: the site from inventory, and every Kubernetes object built from it.

site (inventory -> Site), capacity (quota against GPUs), kueue and tenancy (the objects),
objects (all of them in apply order). Stdlib only: the module, the filter and the driver's
`gpurack platform render` all build through here.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.applied import summarise
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.capacity import (
    PoolCapacity,
    pool_capacity,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.gpu_operator import (
    gpu_operator_values,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.gpu_operator_inputs import (
    GpuOperatorInputError,
    operator_hosts,
    operator_node_labels,
    settings_from_mapping,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.inference import (
    PRESTOP_S,
    SERVICE_LABEL,
    model_cache_dirs,
    serving_target,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.objects import (
    DEFAULT_SECTIONS,
    SECTIONS,
    build_objects,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.quantity import signed
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.removed import (
    removed_services,
    removed_team_objects,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.scrape import (
    ScrapeOptions,
    prometheus_rbac,
    scrape_config,
    targets_from_hostvars,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.site import (
    PlatformInputError,
    Site,
    site_from_dict,
    site_from_hostvars,
)

__all__ = [
    "DEFAULT_SECTIONS",
    "PRESTOP_S",
    "SECTIONS",
    "SERVICE_LABEL",
    "GpuOperatorInputError",
    "PlatformInputError",
    "PoolCapacity",
    "ScrapeOptions",
    "Site",
    "build_objects",
    "gpu_operator_values",
    "model_cache_dirs",
    "operator_hosts",
    "operator_node_labels",
    "pool_capacity",
    "prometheus_rbac",
    "removed_services",
    "removed_team_objects",
    "scrape_config",
    "serving_target",
    "settings_from_mapping",
    "signed",
    "site_from_dict",
    "site_from_hostvars",
    "summarise",
    "targets_from_hostvars",
]
