# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""DRA for the pools that hand out their GPUs through it (gpurack_pool.allocation: dra): per pool, a
resource.k8s.io/v1 DeviceClass selecting the site's driver's devices (gpurack_dra_driver), and in
each team namespace with quota on the pool a ResourceClaimTemplate of one of them (docs/dra.md).

Kueue v0.17 counts DRA devices only behind its alpha DynamicResourceAllocation gate (off by default,
and gpurack turns on no alpha gate), so a claim is not charged to a team's ClusterQueue: the team's
ResourceQuota caps the devices of each dra pool's class instead (device_quota_resource).
"""

from __future__ import annotations

from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import PREFIX
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.common import (
    metadata,
    obj,
    team_labels,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import Pool, Site, Team

API_VERSION = "resource.k8s.io/v1"
# The one request of a pool's claim template: what a container names in resources.claims[].request.
CLAIM_REQUEST = "gpu"
# A dra pool's DeviceClass is `<pool>` + CLASS_SUFFIX and carries the pool's name in POOL_LABEL.
CLASS_SUFFIX = ".gpurack.io"
POOL_LABEL = f"{PREFIX}pool"
# Kubernetes' quota name for the devices claimed of a class is `<class>` + PER_CLASS_QUOTA
# (k8s.io/api/core/v1 ResourceClaimsPerClass).
PER_CLASS_QUOTA = ".deviceclass.resource.k8s.io/devices"


def dra_pools(site: Site) -> tuple[Pool, ...]:
    return tuple(p for p in site.pools if p.allocation == "dra")


def device_class_name(pool: str) -> str:
    """`<pool>.gpurack.io`: a pool name is a DNS label, so this never meets a vendor's class name."""
    return f"{pool}{CLASS_SUFFIX}"


def claim_template_name(pool: str) -> str:
    return f"{pool}-gpu"


def device_quota_resource(pool: str) -> str:
    """The ResourceQuota key that caps the devices a namespace claims of the pool's class."""
    return device_class_name(pool) + PER_CLASS_QUOTA


def dra_objects(site: Site) -> list[dict[str, Any]]:
    """Each dra pool's DeviceClass, then each team's claim templates (by team, then pool)."""
    pools = dra_pools(site)
    templates = [claim_template(t, p) for t in site.teams for p in pools if p.name in t.quota]
    return [*(device_class(site, p) for p in pools), *templates]


def device_class(site: Site, pool: Pool) -> dict[str, Any]:
    """Every device of the site's driver. Which node's devices a claim gets follows the pod's node:
    Kueue's flavor (or the pod's own nodeSelector) puts it on the pool."""
    selector = {"cel": {"expression": f"device.driver == '{site.dra_driver}'"}}
    meta = metadata(device_class_name(pool.name), **{POOL_LABEL: pool.name})
    return obj(API_VERSION, "DeviceClass", meta, spec={"selectors": [selector]})


def claim_template(team: Team, pool: Pool) -> dict[str, Any]:
    """One whole device of the pool's class per claim; a pod that wants n GPUs names n claims."""
    request = {
        "name": CLAIM_REQUEST,
        "exactly": {
            "deviceClassName": device_class_name(pool.name),
            "allocationMode": "ExactCount",
            "count": 1,
        },
    }
    labels = {**team_labels(team.name), POOL_LABEL: pool.name}
    meta = metadata(claim_template_name(pool.name), team.name, **labels)
    return obj(
        API_VERSION, "ResourceClaimTemplate", meta, spec={"spec": {"devices": {"requests": [request]}}}
    )
