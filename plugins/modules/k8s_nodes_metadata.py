#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_nodes_metadata
short_description: Keep many Kubernetes Nodes' gpurack labels, taints and validation state, in one call
description:
  - The bulk form of M(gpurack.bootstrap.k8s_node_metadata), with the same ownership rules, for a fleet
    at once; one paged LIST of the Nodes (500 a page), a plan per Node, and a patch only for the Nodes
    that differ, O(concurrency) at a time.
  - On each Node listed in O(nodes), makes the labels and taints gpurack owns equal to its C(labels) and
    C(taints), and lets the C(gpurack.io/validating:NoSchedule) taint and the C(gpurack.io/validation-failed)
    annotation follow its C(validation).
  - gpurack owns every C(gpurack.io/*) label, every C(gpurack.io/*) taint except C(gpurack.io/validating),
    and the other keys it set before, which it lists in the annotations C(gpurack.io/managed-labels) and
    C(gpurack.io/managed-taints). An owned label or taint that is no longer desired is removed. Labels and
    taints it does not own (the kubelet's, C(node.kubernetes.io/*), an administrator's) are never touched.
  - Each patch carries the C(resourceVersion) of the Node it was planned on; on a 409 Conflict the module
    reads that Node again and re-plans, up to O(retries) times.
  - A Node that is not in the cluster, or whose patch the API server refuses, is a failure of that Node alone,
    named in RV(failed_nodes); the other Nodes are still reconciled, and the task fails at the end.
  - Does not write the C(GpurackValidated) condition; M(gpurack.bootstrap.k8s_node_metadata) does, per Node.
  - Runs on the controller (C(localhost)) with an admin kubeconfig.
version_added: "0.1.0"
author: gpurack maintainers (@gpurack)
extends_documentation_fragment:
  - gpurack.bootstrap.node_api
options:
  nodes:
    description: The Nodes to reconcile and what gpurack wants on each; a name may appear once.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: Name of the Node.
        type: str
        required: true
      labels:
        description:
          - Every label gpurack wants on the Node, key to value; restricted keys such as
            C(node-role.kubernetes.io/gpu) are allowed.
          - A value of null leaves that label as it is (set and owned when the Node has it, absent when not).
        type: dict
        default: {}
      taints:
        description:
          - Every taint gpurack wants on the Node, each with C(key), C(value) (optional) and C(effect)
            (C(NoSchedule), C(PreferNoSchedule) or C(NoExecute)); never C(gpurack.io/validating).
        type: list
        elements: dict
        default: []
      validation:
        description: The validation verdict, which the C(gpurack.io/validating:NoSchedule) taint follows.
        type: str
        choices: [pass, fail, unknown]
        default: unknown
      validation_reason:
        description: Why validation failed, for the annotation C(gpurack.io/validation-failed).
        type: str
        default: ""
  concurrency:
    description: How many Nodes are patched at once (threads, and connections to the API server).
    type: int
    default: 16
  retries:
    description: How many times to read a Node again and re-plan after a 409 Conflict.
    type: int
    default: 5
attributes:
  check_mode:
    support: full
    description: Lists the Nodes and reports which would change, without patching any.
  diff_mode:
    support: full
    description:
      - Shows, for the changed Nodes only, the owned labels, the owned and validating taints and the gpurack
        annotations before and after, keyed by Node name.
notes:
  - Node C(spec.taints) has no patch strategy, so the module sends the whole new taint list of a changed Node.
  - The ownership rules are in C(docs/node-labels.md) of the collection.
seealso:
  - module: gpurack.bootstrap.k8s_node_metadata
"""

EXAMPLES = r"""
- name: Set every GPU node's labels and taints in one call
  gpurack.bootstrap.k8s_nodes_metadata:
    kubeconfig: ~/.kube/gpurack-kubernetes.conf
    nodes:
      - name: gpu001
        labels: {gpurack.io/pool: h100-train-a, node-role.kubernetes.io/gpu: ""}
        taints: [{key: gpurack.io/pool, value: h100-train-a, effect: NoSchedule}]
      - name: gpu002
        labels: {gpurack.io/pool: h200-inference, node-role.kubernetes.io/gpu: ""}
        validation: fail
        validation_reason: "gpu.count: 7 GPUs found, expected 8"
    concurrency: 16
  delegate_to: localhost
  run_once: true
  become: false
"""

RETURN = r"""
nodes:
  description: How many Nodes were asked for.
  returned: always
  type: int
  sample: 1000
changed_nodes:
  description: The Nodes patched (or, in check mode, that would be), by name.
  returned: always
  type: list
  elements: str
  sample: [gpu001, gpu017]
unchanged:
  description: How many of the Nodes asked for were already as desired.
  returned: always
  type: int
  sample: 998
failed_nodes:
  description: Each Node that could not be reconciled, with why (not in the cluster, an API error, conflicts).
  returned: always
  type: dict
  sample:
    gpu999: "Node gpu999 is not in the cluster (kubeconfig /root/kc): join it first (playbooks/join.yml)."
patches:
  description: How many patch requests were sent, the ones answered 409 Conflict included.
  returned: always
  type: int
  sample: 2
conflicts:
  description: How many patches the API server answered 409 Conflict (each followed by a read and a re-plan).
  returned: always
  type: int
  sample: 0
lists:
  description: How many LIST requests (pages of 500 Nodes) were made.
  returned: always
  type: int
  sample: 2
diff:
  description:
    - The owned labels, owned and validating taints and gpurack annotations of the changed Nodes,
      before and after.
  returned: when diff mode is on
  type: dict
  sample:
    before: {gpu001: {labels: {}, taints: ["gpurack.io/validating:NoSchedule"], annotations: {}}}
    after: {gpu001: {labels: {gpurack.io/pool: h100-train-a}, taints: [], annotations: {}}}
"""

import json
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node import (
    ConflictError,
    Desired,
    KubeClient,
    KubeconfigError,
    Synced,
    api_error_text,
    core_v1,
    desired_errors,
    missing_node_text,
    sync_metadata,
)

PAGE = 500
NODE_SPEC: dict[str, Any] = {
    "name": {"type": "str", "required": True},
    "labels": {"type": "dict", "default": {}},
    "taints": {"type": "list", "elements": "dict", "default": []},
    "validation": {"type": "str", "choices": ["pass", "fail", "unknown"], "default": "unknown"},
    "validation_reason": {"type": "str", "default": ""},
}
ARGUMENT_SPEC: dict[str, Any] = {
    "kubeconfig": {"type": "path", "required": True},
    "context": {"type": "str"},
    "nodes": {"type": "list", "elements": "dict", "required": True, "options": NODE_SPEC},
    "concurrency": {"type": "int", "default": 16},
    "retries": {"type": "int", "default": 5},
}


class _NodeError(Exception):
    """One Node could not be read or patched; the message says which and why."""


@dataclass(frozen=True)
class _Outcome:
    """One Node's end: synced (as planned, patched or not) or an error; the patches sent for it."""

    name: str
    synced: Synced | None = None
    error: str = ""
    patches: int = 0
    conflicts: int = 0


class _Fleet:
    """The API calls on many Nodes: raw JSON (building the client's model objects costs more than
    the request at this count), and per-Node failures raised as _NodeError instead of exiting."""

    def __init__(self, kube: KubeClient, kubeconfig: str) -> None:
        self.kube, self.kubeconfig = kube, kubeconfig

    def _json(self, doing: str, name: str, request: Any, *args: Any, **kwargs: Any) -> Any:
        """The API's answer as JSON; None for a 409 Conflict on a patch."""
        try:
            return json.loads(request(*args, _preload_content=False, **kwargs).data)
        except self.kube.api_exception as exc:
            status = getattr(exc, "status", None)
            if status == 409 and doing == "patch":
                return None
            if status == 404 and name:
                raise _NodeError(missing_node_text(name, self.kubeconfig)) from exc
            where = f"node {name}" if name else "the Nodes"
            raise _NodeError(f"Could not {doing} {where}: {api_error_text(exc)}") from exc
        except self.kube.http_error as exc:
            where = f"node {name}" if name else "the Nodes"
            raise _NodeError(f"Could not reach the API server to {doing} {where}: {exc}") from exc

    def list_all(self) -> tuple[dict[str, dict[str, Any]], int]:
        """Every Node by name, read PAGE at a time, and how many LIST requests it took.

        Raises:
            _NodeError: a page could not be read.
        """
        nodes: dict[str, dict[str, Any]] = {}
        token, pages = None, 0
        while True:
            page = self._json("list", "", self.kube.core.list_node, limit=PAGE, _continue=token)
            pages += 1
            nodes.update((n["metadata"]["name"], n) for n in page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return nodes, pages

    def read(self, name: str) -> dict[str, Any]:
        """Node `name` as the API serialises it; raises _NodeError."""
        node: dict[str, Any] = self._json("read", name, self.kube.core.read_node, name)
        return node

    def patch(self, name: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """The patched Node, or None on a 409 Conflict; raises _NodeError."""
        node: dict[str, Any] | None = self._json("patch", name, self.kube.core.patch_node, name, body)
        return node


def _client(module: AnsibleModule) -> _Fleet:
    p = module.params
    try:
        kube = core_v1(p["kubeconfig"], p["context"], pool_size=p["concurrency"])
    except ImportError:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=traceback.format_exc())
    except KubeconfigError as exc:
        module.fail_json(msg=str(exc))
    return _Fleet(kube, p["kubeconfig"])


def _input_errors(params: dict[str, Any]) -> list[str]:
    """Every problem with the options, before any API call: each Node's desired_errors, a name twice."""
    errors = (
        [] if params["concurrency"] >= 1 else [f"concurrency must be at least 1, got {params['concurrency']}"]
    )
    seen: set[str] = set()
    for entry in params["nodes"]:
        name = entry["name"]
        if name in seen:
            errors.append(f"node {name} is listed twice")
        seen.add(name)
        errors.extend(f"node {name}: {e}" for e in desired_errors(entry["labels"], entry["taints"]))
    return errors


def _sync_one(fleet: _Fleet, entry: dict[str, Any], node: dict[str, Any], module: AnsibleModule) -> _Outcome:
    """Plan one Node as listed, and patch it when it differs (re-read and re-planned on a 409)."""
    name = entry["name"]
    desired = Desired(entry["labels"], entry["taints"], entry["validation"], entry["validation_reason"])
    try:
        synced = sync_metadata(
            node,
            desired,
            read=lambda: fleet.read(name),
            patch=lambda body: fleet.patch(name, body),
            check_mode=module.check_mode,
            retries=module.params["retries"],
        )
    except ConflictError as exc:
        why = f"Could not patch node {name}: {exc}"
        return _Outcome(name, error=why, patches=exc.attempts, conflicts=exc.attempts)
    except (_NodeError, ValueError) as exc:
        return _Outcome(name, error=str(exc))
    # Every patch but the one that landed met a conflict.
    return _Outcome(name, synced=synced, patches=synced.patches, conflicts=max(synced.patches - 1, 0))


def _reconcile(module: AnsibleModule, fleet: _Fleet, current: dict[str, dict[str, Any]]) -> list[_Outcome]:
    """Every Node asked for, O(concurrency) at a time; one that the LIST did not hold fails alone."""
    entries = module.params["nodes"]
    outcomes = [
        _Outcome(e["name"], error=missing_node_text(e["name"], fleet.kubeconfig))
        for e in entries
        if e["name"] not in current
    ]
    with ThreadPoolExecutor(max_workers=module.params["concurrency"]) as pool:
        present = [e for e in entries if e["name"] in current]
        outcomes.extend(pool.map(lambda e: _sync_one(fleet, e, current[e["name"]], module), present))
    return sorted(outcomes, key=lambda o: o.name)


def _result(module: AnsibleModule, outcomes: list[_Outcome], lists: int) -> dict[str, Any]:
    changed = {o.name: o.synced.steps for o in outcomes if o.synced is not None and o.synced.steps.changed}
    result: dict[str, Any] = {
        "changed": bool(changed),
        "nodes": len(outcomes),
        "changed_nodes": list(changed),
        "unchanged": sum(1 for o in outcomes if o.synced is not None) - len(changed),
        "failed_nodes": {o.name: o.error for o in outcomes if o.error},
        "patches": sum(o.patches for o in outcomes),
        "conflicts": sum(o.conflicts for o in outcomes),
        "lists": lists,
    }
    if module._diff:
        result["diff"] = {
            "before_header": "nodes",
            "after_header": "nodes",
            "before": {name: steps.before for name, steps in changed.items()},
            "after": {name: steps.after for name, steps in changed.items()},
        }
    return result


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    if errors := _input_errors(module.params):
        module.fail_json(msg="Invalid nodes: " + "; ".join(errors), errors=errors)
    fleet = _client(module)
    try:
        current, lists = fleet.list_all()
    except _NodeError as exc:
        module.fail_json(msg=f"{exc} (kubeconfig {fleet.kubeconfig})")
    result = _result(module, _reconcile(module, fleet, current), lists)
    if failed := result["failed_nodes"]:
        shown = "; ".join(f"{name}: {why}" for name, why in list(failed.items())[:3])
        more = f" (and {len(failed) - 3} more)" if len(failed) > 3 else ""
        module.fail_json(
            msg=f"Could not reconcile {len(failed)} of {result['nodes']} Nodes: {shown}{more}", **result
        )
    module.exit_json(**result)


if __name__ == "__main__":
    main()
