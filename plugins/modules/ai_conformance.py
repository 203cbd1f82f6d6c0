#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
from __future__ import annotations

DOCUMENTATION = r"""
---
module: ai_conformance
short_description: Run the CNCF Kubernetes AI Conformance tests that can run on a gpurack cluster
description:
  - Runs, against the cluster of O(kubeconfig), the automated tests of the AI conformance requirements
    (the catalog in module_utils/conformance), each returned as a result of the one result model
    (tier C(conformance), component the requirement's id), and one C(skip) result, with why, for each
    requirement no test covers.
  - Tests that create objects (a gang Job pair, probe pods, a ResourceClaim, a LocalQueue) create them in
    the team namespace O(namespace), labelled C(gpurack.io/conformance-run), wait a bounded time and delete
    them whatever the outcome.
  - Runs on the controller (C(localhost)) with an admin kubeconfig. Objects are made and deleted within
    the run, so it reports no change.
version_added: "0.1.0"
author: gpurack maintainers (@gpurack)
extends_documentation_fragment:
  - gpurack.bootstrap.node_api
options:
  namespace:
    description:
      - The team namespace the tests run in.
    type: str
    required: true
  queue:
    description:
      - The team's LocalQueue (Kueue).
    type: str
    required: true
  cluster_queue:
    description:
      - The team's ClusterQueue (a LocalQueue made for it must become Active).
    type: str
    required: true
  run:
    description:
      - Name prefix of every object made (unique per run).
    type: str
    required: true
  only:
    description: Run only the tests of these requirement ids (all when empty).
    type: list
    elements: str
    default: []
  gpu_resource:
    description:
      - The extended resource of a GPU.
    type: str
    default: nvidia.com/gpu
  pause_image:
    description:
      - The image of the pods that only wait (gang and DRA pods).
    type: str
    default: registry.k8s.io/pause:3.10
  probe_image:
    description:
      - The image of the device probe; empty skips the secure_accelerator_access tests.
    type: str
    default: ""
  probe_command:
    description: The probe's command; it prints the /dev/nvidia* files it sees, one a line, and exits 0.
    type: list
    elements: str
    default: ["/bin/sh", "-c", "ls -1d /dev/nvidia* 2>/dev/null; true"]
  probe_node:
    description:
      - The GPU node the probes run on (empty - the first with allocatable GPUs).
    type: str
    default: ""
  gang_pods:
    description:
      - Pods of the gang that fits.
    type: int
    default: 2
  gang_gpus_per_pod:
    description:
      - GPUs each gang pod asks for.
    type: int
    default: 1
  gang_unfit_pods:
    description:
      - Pods of the gang that cannot fit the queue.
    type: int
    default: 64
  timeout_s:
    description:
      - Seconds each wait lasts at most.
    type: float
    default: 60
  hold_s:
    description:
      - Seconds the gang that cannot fit is watched for a running pod.
    type: float
    default: 10
  workload_job:
    description:
      - The Prometheus scrape job of discovered workload pods.
    type: str
    default: inference
  prometheus_url:
    description:
      - Prometheus's base URL (empty - the metrics tests skip).
    type: str
    default: ""
attributes:
  check_mode:
    support: full
    description: Runs only the tests that read or dry-run; those that create objects are C(skip) with why.
  diff_mode:
    support: none
    description: The module reports test results, not a change to compare.
"""

EXAMPLES = r"""
- name: Run the AI conformance tests in team alpha's queue
  gpurack.bootstrap.ai_conformance:
    kubeconfig: ~/.kube/gpurack-kubernetes.conf
    namespace: alpha
    queue: alpha
    cluster_queue: alpha
    run: conformance-20261205-101500
    prometheus_url: http://10.0.0.10:9090/
  register: __conformance
"""

RETURN = r"""
results:
  description:
    - One result per test and per untested requirement (docs/checks.md's shape), in the catalog's order.
  returned: always
  type: list
  elements: dict
kubernetes_version:
  description: The API server's gitVersion.
  returned: always
  type: str
  sample: v1.36.3
summary:
  description: The results counted per verdict, and their verdict (the one rule).
  returned: always
  type: dict
  sample: {pass: 9, warn: 0, fail: 0, skip: 6, verdict: pass}
"""

from typing import Any

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance import (
    ApiError,
    KubeCluster,
    Settings,
    run,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import summarise

ARGUMENT_SPEC: dict[str, Any] = {
    "kubeconfig": {"type": "path", "required": True},
    "context": {"type": "str"},
    "namespace": {"type": "str", "required": True},
    "queue": {"type": "str", "required": True},
    "cluster_queue": {"type": "str", "required": True},
    "run": {"type": "str", "required": True},
    "only": {"type": "list", "elements": "str", "default": []},
    "gpu_resource": {"type": "str", "default": "nvidia.com/gpu"},
    "pause_image": {"type": "str", "default": "registry.k8s.io/pause:3.10"},
    "probe_image": {"type": "str", "default": ""},
    "probe_command": {
        "type": "list",
        "elements": "str",
        "default": ["/bin/sh", "-c", "ls -1d /dev/nvidia* 2>/dev/null; true"],
    },
    "probe_node": {"type": "str", "default": ""},
    "gang_pods": {"type": "int", "default": 2},
    "gang_gpus_per_pod": {"type": "int", "default": 1},
    "gang_unfit_pods": {"type": "int", "default": 64},
    "timeout_s": {"type": "float", "default": 60},
    "hold_s": {"type": "float", "default": 10},
    "workload_job": {"type": "str", "default": "inference"},
    "prometheus_url": {"type": "str", "default": ""},
}


def _cluster(module: AnsibleModule) -> tuple[KubeCluster, str]:
    """The cluster of the kubeconfig, and its version; fails the module when it cannot be reached."""
    try:
        import kubernetes.config  # noqa: PLC0415 - the documentation and argument checks work without it
        from kubernetes.dynamic import DynamicClient  # noqa: PLC0415
        from kubernetes.dynamic.exceptions import DynamicApiError  # noqa: PLC0415
    except ImportError:
        module.fail_json(msg="The kubernetes Python client is required (pip install kubernetes)")
    p = module.params
    try:
        client = kubernetes.config.new_client_from_config(config_file=p["kubeconfig"], context=p["context"])  # type: ignore[no-untyped-call]
        dynamic = DynamicClient(client)  # type: ignore[no-untyped-call]
        cluster = KubeCluster(dynamic, DynamicApiError, p["prometheus_url"])
        version = str((cluster.get("/version") or {}).get("gitVersion") or "")
    except (kubernetes.config.ConfigException, OSError, ValueError) as exc:
        module.fail_json(msg=f"Could not load kubeconfig {p['kubeconfig']}: {exc}")
    except ApiError as exc:
        module.fail_json(msg=f"Could not read the API server's version: {exc}")
    except Exception as exc:  # the dynamic client's discovery raises the HTTP library's errors
        module.fail_json(msg=f"Could not reach the API server of {p['kubeconfig']}: {exc}")
    return cluster, version


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    cluster, version = _cluster(module)
    settings = Settings.from_mapping({**module.params, "create": not module.check_mode})
    results = [r.to_dict() for r in run(cluster, settings, tuple(module.params["only"]))]
    module.exit_json(changed=False, results=results, kubernetes_version=version, summary=summarise(results))


if __name__ == "__main__":
    main()
