"""tenancy_objects per team: namespace, RBAC, quota, limits and network policies, field by field."""

from __future__ import annotations

from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.tenancy import tenancy_objects
from platform_inputs import site


def _of(team: str, kind: str, **site_args: Any) -> list[dict[str, Any]]:
    found = tenancy_objects(site(**site_args))
    return [
        o
        for o in found
        if o["kind"] == kind and team in (o["metadata"].get("namespace"), o["metadata"]["name"])
    ]


def test_tenancy_objects_start_with_the_namespaces() -> None:
    kinds = [
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])
        for o in tenancy_objects(site())
    ]
    assert kinds[:2] == [("Namespace", "", "inference"), ("Namespace", "", "research")]
    assert kinds[2:8] == [
        ("Role", "inference", "gpurack-team"),
        ("RoleBinding", "inference", "gpurack-team"),
        ("ResourceQuota", "inference", "gpurack-team"),
        ("LimitRange", "inference", "gpurack-defaults"),
        ("NetworkPolicy", "inference", "default-deny"),
        ("NetworkPolicy", "inference", "allow-dns"),
    ]
    assert all(
        o["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpurack" for o in tenancy_objects(site())
    )


def test_namespace_carries_pod_security_restricted_unless_the_team_says_baseline() -> None:
    (research,) = _of("research", "Namespace")
    (inference,) = _of("inference", "Namespace")
    for mode in ("enforce", "audit", "warn"):
        assert research["metadata"]["labels"][f"pod-security.kubernetes.io/{mode}"] == "restricted"
        assert inference["metadata"]["labels"][f"pod-security.kubernetes.io/{mode}"] == "baseline"
    assert research["metadata"]["labels"]["gpurack.io/team"] == "research"
    assert research["apiVersion"] == "v1"


def test_role_binding_binds_the_team_groups_to_the_team_role() -> None:
    (binding,) = _of("inference", "RoleBinding")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "gpurack-team",
    }
    assert binding["subjects"] == [
        {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "inference-oncall"},
        {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "inference-users"},
    ]


def test_role_manages_jobs_and_pods_and_reads_kueue_but_not_rbac_or_quota() -> None:
    (role,) = _of("research", "Role")
    rules = {
        (g, r): set(rule["verbs"])
        for rule in role["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
    }
    assert {"create", "delete", "get", "list", "watch"} <= rules[("batch", "jobs")]
    assert {"create", "delete"} <= rules[("", "pods")]
    assert rules[("kueue.x-k8s.io", "workloads")] == {"get", "list", "watch"}
    assert rules[("", "resourcequotas")] == {"get", "list", "watch"}
    assert not any(group == "rbac.authorization.k8s.io" for group, _ in rules)
    assert ("", "namespaces") not in rules


def test_resource_quota_is_the_most_kueue_can_admit_for_the_team() -> None:
    (research,) = _of("research", "ResourceQuota")
    # GPUs: h100 12 nominal + min(borrowing limit 4, inference's lendable 2), h200 0 + 2 = 16.
    # CPU and memory have no limits: 96 + 32 and 0 + 500m; 1Ti + 256Gi and 0 + 2Gi.
    assert research["spec"]["hard"] == {
        "limits.cpu": "128500m",
        "limits.memory": "1282Gi",
        "persistentvolumeclaims": "20",
        "requests.cpu": "128500m",
        "requests.memory": "1282Gi",
        "requests.nvidia.com/gpu": "16",
        "requests.storage": "1Ti",
    }
    (inference,) = _of("inference", "ResourceQuota")
    # inference borrows without limit: 4 + 12 on h100, 2 + 0 on h200.
    assert inference["spec"]["hard"]["requests.nvidia.com/gpu"] == "18"


def test_resource_quota_without_borrowing_is_the_nominal_quota() -> None:
    teams = [
        {
            "name": "solo",
            "groups": ["g"],
            "quota": {"h100-train-a": {"gpus": 8, "cpu": "4", "memory": "8Gi"}},
            "storage": "500Gi",
            "volume_claims": 3,
        },
    ]
    (quota,) = _of("solo", "ResourceQuota", gpurack_teams=teams)
    assert quota["spec"]["hard"] == {
        "limits.cpu": "4",
        "limits.memory": "8Gi",
        "persistentvolumeclaims": "3",
        "requests.cpu": "4",
        "requests.memory": "8Gi",
        "requests.nvidia.com/gpu": "8",
        "requests.storage": "500Gi",
    }


def test_limit_range_gives_containers_default_requests_and_limits() -> None:
    (limits,) = _of("research", "LimitRange")
    assert limits["spec"] == {
        "limits": [
            {
                "type": "Container",
                "default": {"cpu": "1", "memory": "1Gi"},
                "defaultRequest": {"cpu": "100m", "memory": "128Mi"},
            }
        ]
    }


def test_limit_range_takes_a_teams_container_defaults_over_gpuracks() -> None:
    teams = [
        {
            "name": "solo",
            "groups": ["g"],
            "quota": {"h100-train-a": {"gpus": 8}},
            # Only the limit's memory and the request's cpu named: the rest stay gpurack's.
            "container_defaults": {"request": {"cpu": "500m"}, "limit": {"memory": "16Gi"}},
        },
    ]
    (limits,) = _of("solo", "LimitRange", gpurack_teams=teams)
    (container,) = limits["spec"]["limits"]
    assert container["default"] == {"cpu": "1", "memory": "16Gi"}
    assert container["defaultRequest"] == {"cpu": "500m", "memory": "128Mi"}


def test_network_policies_deny_all_then_allow_dns_and_the_namespace() -> None:
    policies = {p["metadata"]["name"]: p["spec"] for p in _of("research", "NetworkPolicy")}
    assert list(policies) == ["default-deny", "allow-dns", "allow-same-namespace"]
    assert policies["default-deny"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    assert policies["allow-dns"]["egress"] == [
        {
            "to": [
                {
                    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                    "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                }
            ],
            "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
        }
    ]
    assert policies["allow-same-namespace"]["ingress"] == [{"from": [{"podSelector": {}}]}]
    assert policies["allow-same-namespace"]["egress"] == [{"to": [{"podSelector": {}}]}]


def test_network_policy_allows_the_object_store_only_when_set() -> None:
    store = {"cidrs": ["10.8.0.5/32", "10.9.0.0/16"], "port": 9000}
    policies = {
        p["metadata"]["name"]: p["spec"] for p in _of("research", "NetworkPolicy", gpurack_object_store=store)
    }
    assert policies["allow-object-store"] == {
        "podSelector": {},
        "policyTypes": ["Egress"],
        "egress": [
            {
                "to": [{"ipBlock": {"cidr": "10.8.0.5/32"}}, {"ipBlock": {"cidr": "10.9.0.0/16"}}],
                "ports": [{"protocol": "TCP", "port": 9000}],
            }
        ],
    }


def test_network_policy_allows_an_in_cluster_store_by_namespace_for_its_teams_only() -> None:
    store = {
        "namespace": "gpurack-object-store",
        "pod_labels": {"app.kubernetes.io/name": "versitygw"},
        "port": 7070,
        "teams": ["research"],
        "endpoint": "http://versitygw.gpurack-object-store.svc.cluster.local:7070",
    }
    policies = {
        p["metadata"]["name"]: p["spec"] for p in _of("research", "NetworkPolicy", gpurack_object_store=store)
    }
    assert policies["allow-object-store"]["egress"] == [
        {
            "to": [
                {
                    "namespaceSelector": {
                        "matchLabels": {"kubernetes.io/metadata.name": "gpurack-object-store"}
                    },
                    "podSelector": {"matchLabels": {"app.kubernetes.io/name": "versitygw"}},
                }
            ],
            "ports": [{"protocol": "TCP", "port": 7070}],
        }
    ]
    others = {p["metadata"]["name"] for p in _of("inference", "NetworkPolicy", gpurack_object_store=store)}
    assert "allow-object-store" not in others
