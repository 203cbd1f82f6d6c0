# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Tenancy per team: its namespace with Pod Security labels, a role bound to its groups, a
ResourceQuota and LimitRange, and NetworkPolicies (default deny, then DNS, the namespace itself
and the object store)."""

from __future__ import annotations

import copy
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import quantity
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.capacity import ceiling
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.common import (
    GPU_RESOURCE,
    NAMESPACE_NAME_LABEL,
    metadata,
    obj,
    team_labels,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.dra import device_quota_resource
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import ObjectStore, Site, Team

ROLE_NAME = "gpurack-team"
QUOTA_NAME = "gpurack-team"
LIMIT_RANGE_NAME = "gpurack-defaults"
POD_SECURITY_MODES = ("enforce", "audit", "warn")
# What a container gets when it names no requests or limits (so the quota on limits admits it).
_ALL = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
_READ = ["get", "list", "watch"]
# What a team member may do in the team's namespace: run and manage jobs and their pods, the
# objects a job needs, and read Kueue's view of their queue. No RBAC, quota or policy objects.
ROLE_RULES: tuple[dict[str, Any], ...] = (
    {"apiGroups": ["batch"], "resources": ["cronjobs", "jobs"], "verbs": _ALL},
    {"apiGroups": ["apps"], "resources": ["deployments", "statefulsets"], "verbs": _ALL},
    {
        "apiGroups": [""],
        "resources": ["configmaps", "persistentvolumeclaims", "pods", "secrets", "services"],
        "verbs": _ALL,
    },
    {
        "apiGroups": [""],
        "resources": ["pods/attach", "pods/exec", "pods/portforward"],
        "verbs": ["create", "get"],
    },
    {"apiGroups": [""], "resources": ["events", "pods/log", "resourcequotas", "limitranges"], "verbs": _READ},
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["localqueues", "workloads"], "verbs": _READ},
)


def tenancy_objects(site: Site) -> list[dict[str, Any]]:
    """Namespaces first (every other object lives in one), then each team's objects."""
    objects = [namespace(t) for t in site.teams]
    for team in site.teams:
        objects.extend(
            [
                role(team),
                role_binding(team),
                resource_quota(site, team),
                limit_range(team),
                *network_policies(team, site.object_store),
            ]
        )
    return objects


def namespace(team: Team) -> dict[str, Any]:
    labels = {f"pod-security.kubernetes.io/{mode}": team.pod_security for mode in POD_SECURITY_MODES}
    return obj("v1", "Namespace", metadata(team.name, **team_labels(team.name), **labels))


def role(team: Team) -> dict[str, Any]:
    meta = metadata(ROLE_NAME, team.name, **team_labels(team.name))
    return obj("rbac.authorization.k8s.io/v1", "Role", meta, rules=copy.deepcopy(list(ROLE_RULES)))


def role_binding(team: Team) -> dict[str, Any]:
    """The team's identity-provider groups (as the API server sees them, e.g. from OIDC) get the role."""
    subjects = [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": g} for g in team.groups]
    return obj(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        metadata(ROLE_NAME, team.name, **team_labels(team.name)),
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ROLE_NAME},
        subjects=subjects,
    )


def resource_quota(site: Site, team: Team) -> dict[str, Any]:
    """The most Kueue can ever admit for the team (nominal + borrowable, over its pools).

    Kueue decides admission; the quota is the backstop for pods that bypass it, so it must not
    refuse a pod that Kueue admitted on borrowed quota. A dra pool's devices, which Kueue does not
    count (dra.py), are capped per pool by its DeviceClass's quota.
    """
    most = [ceiling(site, team, pool) for pool in sorted(team.quota)]
    cpu = str(quantity.total([m.cpu for m in most if m.cpu is not None]))
    memory = str(quantity.total([m.memory for m in most if m.memory is not None]))
    hard = {
        "limits.cpu": cpu,
        "limits.memory": memory,
        "persistentvolumeclaims": str(team.volume_claims),
        "requests.cpu": cpu,
        "requests.memory": memory,
        f"requests.{GPU_RESOURCE}": str(sum(m.gpus or 0 for m in most)),
        "requests.storage": str(team.storage),
    }
    for pool in site.pools:
        if pool.allocation == "dra" and pool.name in team.quota:
            hard[device_quota_resource(pool.name)] = str(ceiling(site, team, pool.name).gpus or 0)
    meta = metadata(QUOTA_NAME, team.name, **team_labels(team.name))
    return obj("v1", "ResourceQuota", meta, spec={"hard": dict(sorted(hard.items()))})


def limit_range(team: Team) -> dict[str, Any]:
    limits = [
        {
            "type": "Container",
            "default": {k: str(v) for k, v in team.container_limit.items()},
            "defaultRequest": {k: str(v) for k, v in team.container_request.items()},
        }
    ]
    meta = metadata(LIMIT_RANGE_NAME, team.name, **team_labels(team.name))
    return obj("v1", "LimitRange", meta, spec={"limits": limits})


def network_policies(team: Team, store: ObjectStore | None) -> list[dict[str, Any]]:
    """Deny all, then allow DNS to kube-dns, the namespace to itself, and the object store when set."""
    policies = [
        _policy(team, "default-deny", {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}),
        _policy(team, "allow-dns", {"podSelector": {}, "policyTypes": ["Egress"], "egress": [_dns_rule()]}),
        _policy(
            team,
            "allow-same-namespace",
            {
                "podSelector": {},
                "policyTypes": ["Ingress", "Egress"],
                "ingress": [{"from": [{"podSelector": {}}]}],
                "egress": [{"to": [{"podSelector": {}}]}],
            },
        ),
    ]
    if store is not None and store.allows(team.name):
        peers: list[dict[str, Any]] = [{"ipBlock": {"cidr": cidr}} for cidr in store.cidrs]
        if store.namespace is not None:
            peers.append(
                {
                    "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: store.namespace}},
                    "podSelector": {"matchLabels": dict(store.pod_labels)} if store.pod_labels else {},
                }
            )
        rule = {
            "to": peers,
            "ports": [{"protocol": "TCP", "port": store.port}],
        }
        spec = {"podSelector": {}, "policyTypes": ["Egress"], "egress": [rule]}
        policies.append(_policy(team, "allow-object-store", spec))
    return policies


def _dns_rule() -> dict[str, Any]:
    peer = {
        "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "kube-system"}},
        "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
    }
    return {"to": [peer], "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}


def _policy(team: Team, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    meta = metadata(name, team.name, **team_labels(team.name))
    return obj("networking.k8s.io/v1", "NetworkPolicy", meta, spec=spec)
