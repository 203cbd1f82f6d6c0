#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: platform_objects
short_description: Build the platform's Kubernetes objects from the site
description:
  - Builds every Kubernetes object of the requested O(sections) from the site that the filter
    C(gpurack.bootstrap.platform_site) read from inventory, in the order to apply them (namespaces
    first, then cluster-scoped Kueue objects, then each namespace's objects).
  - C(tenancy) gives per team a Namespace with Pod Security labels, a Role bound by a RoleBinding to
    the team's groups, a ResourceQuota, a LimitRange and NetworkPolicies; C(kueue) gives
    WorkloadPriorityClasses, a ResourceFlavor per pool, a ClusterQueue per team in the cohort and a
    LocalQueue per team namespace (C(kueue.x-k8s.io/v1beta2)); C(inference) gives, per inference
    service of a team, a Deployment on its pool, a Service, a PodDisruptionBudget and an HPA, plus
    the PriorityClass C(gpurack-inference) and prometheus-adapter, which serves the HPAs their custom
    metric from the site's C(prometheus_url) (its RBAC, rules ConfigMap, Deployment and Service in
    C(observability_namespace), and the APIServices C(v1beta1) and C(v1beta2.custom.metrics.k8s.io))
    (nothing when no team serves); C(gpu_operator) gives the
    operator's Namespace (Pod Security privileged; the chart itself is installed with helm);
    C(observability) gives Prometheus's Namespace, ServiceAccount, token Secret and its read-only
    ClusterRole and binding. Their namespaces are the site's C(gpu_operator_namespace) and
    C(observability_namespace).
  - Fails, before anything is applied, when the teams' nominal GPU quotas add up to more than a
    pool has, naming the teams and the pool, unless the site's C(overcommit) is true
    (C(gpurack_quota_overcommit)).
  - It only computes; apply the objects with C(kubernetes.core.k8s), as the roles C(tenancy),
    C(kueue), C(gpu_operator) and C(observability) do. C(gpurack platform render) writes the same
    objects to files.
version_added: "0.1.0"
author: gpurack maintainers (@gpurack)
options:
  site:
    description: The site, the output of the filter C(gpurack.bootstrap.platform_site).
    type: dict
    required: true
  sections:
    description: Which objects to build.
    type: list
    elements: str
    choices: [tenancy, dra, kueue, inference, gpu_operator, observability]
    default: [tenancy, dra, kueue, inference]
attributes:
  check_mode:
    support: full
    description: The module changes nothing; check mode builds the same objects.
  diff_mode:
    support: none
    description: Nothing is changed here; C(kubernetes.core.k8s) shows the diff when it applies.
"""

EXAMPLES = r"""
- name: Build every platform object once, refusing an overcommitted quota before any change
  gpurack.bootstrap.platform_objects:
    site: "{{ gpurack_platform_site }}"
  delegate_to: localhost
  run_once: true

- name: Build the Kueue objects
  gpurack.bootstrap.platform_objects:
    site: "{{ gpurack_platform_site }}"
    sections: [kueue]
  register: __kueue_objects
"""

RETURN = r"""
objects:
  description: The Kubernetes objects, in the order to apply them.
  returned: success
  type: list
  elements: dict
  sample:
    - apiVersion: kueue.x-k8s.io/v1beta2
      kind: ResourceFlavor
      metadata:
        name: h100-train-a
        labels: {app.kubernetes.io/managed-by: gpurack}
      spec:
        nodeLabels: {gpurack.io/pool: h100-train-a}
        tolerations: [{key: gpurack.io/pool, operator: Equal, value: h100-train-a, effect: NoSchedule}]
capacity:
  description: Per pool, its GPUs and their source (facts or expect), its host count and the nominal GPU
    quota the teams ask of it (in total and per team).
  returned: always
  type: list
  elements: dict
  sample:
    - {pool: h100-train-a, gpus: 32, source: expect, hosts: 4, nominal: 32,
       teams: {research: 24, inference: 8}}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import (
    DEFAULT_SECTIONS,
    SECTIONS,
    PlatformInputError,
    build_objects,
    pool_capacity,
    site_from_dict,
)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "site": {"type": "dict", "required": True},
            "sections": {
                "type": "list",
                "elements": "str",
                "choices": list(SECTIONS),
                "default": list(DEFAULT_SECTIONS),
            },
        },
        supports_check_mode=True,
    )
    try:
        site = site_from_dict(module.params["site"])
    except PlatformInputError as exc:
        module.fail_json(msg=f"Invalid platform site: {exc}")
    capacity = [c.to_dict() for c in pool_capacity(site)]
    try:
        objects = build_objects(site, module.params["sections"])
    except PlatformInputError as exc:
        module.fail_json(msg=f"Refusing the platform objects: {exc}", capacity=capacity)
    module.exit_json(changed=False, objects=objects, capacity=capacity)


if __name__ == "__main__":
    main()
