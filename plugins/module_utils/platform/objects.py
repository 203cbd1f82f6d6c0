# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Every platform object of a site, in the order to apply them, once the quotas fit the pools."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.capacity import quota_errors
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.dra import dra_objects
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.gpu_operator import (
    gpu_operator_objects,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.inference import inference_objects
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.kueue import kueue_objects
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import PlatformInputError, Site
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.observability import (
    observability_objects,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.tenancy import tenancy_objects

SECTIONS: dict[str, Callable[[Site], list[dict[str, Any]]]] = {
    "tenancy": tenancy_objects,
    "dra": dra_objects,
    "kueue": kueue_objects,
    "inference": inference_objects,
    "gpu_operator": gpu_operator_objects,
    "observability": observability_objects,
}
# What the teams need; gpu_operator and observability are their roles' own (render writes all).
DEFAULT_SECTIONS = ("tenancy", "dra", "kueue", "inference")
# Namespaces before anything namespaced, cluster-scoped Kueue objects before the queues that
# name them; within a rank, the builders' own order (by namespace, then name).
KIND_RANK = {
    "Namespace": 0,
    "PriorityClass": 1,
    "WorkloadPriorityClass": 1,
    "ResourceFlavor": 2,
    "DeviceClass": 2,
    "ClusterQueue": 3,
}
NAMESPACED_RANK = 4


def build_objects(site: Site, sections: Sequence[str] = DEFAULT_SECTIONS) -> list[dict[str, Any]]:
    """The objects of `sections` (the teams' tenancy and queues by default), in apply order.

    Raises:
        PlatformInputError: an unknown section, or nominal GPU quotas above a pool's capacity
            (naming team and pool) while site.overcommit is off.
    """
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise PlatformInputError(f"unknown platform sections {unknown}; known: {', '.join(SECTIONS)}")
    if not site.overcommit and (errors := quota_errors(site)):
        raise PlatformInputError("; ".join(errors))
    built = [o for name in SECTIONS if name in sections for o in SECTIONS[name](site)]
    return sorted(built, key=_rank)


def _rank(item: dict[str, Any]) -> tuple[int, str]:
    kind = str(item["kind"])
    rank = KIND_RANK.get(kind, NAMESPACED_RANK)
    return (rank, str(item["metadata"].get("namespace", "")) if rank == NAMESPACED_RANK else "")
