#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: k8s_node_metadata
short_description: Keep a Kubernetes Node's gpurack labels, taints and validation state as desired
description:
  - Makes the labels and taints gpurack owns on one Node equal to O(labels) and O(taints), and lets
    the C(gpurack.io/validating:NoSchedule) taint follow O(validation).
  - gpurack owns every C(gpurack.io/*) label, every C(gpurack.io/*) taint except C(gpurack.io/validating),
    and the other keys it set before, which it lists in the annotations C(gpurack.io/managed-labels) and
    C(gpurack.io/managed-taints). An owned label or taint that is no longer desired is removed. Labels and
    taints it does not own (the kubelet's, C(node.kubernetes.io/*), an administrator's) are never touched.
  - O(validation=pass) removes the validating taint and the annotation C(gpurack.io/validation-failed);
    O(validation=fail) adds the taint when missing and sets that annotation to O(validation_reason);
    O(validation=unknown) leaves both as they are.
  - With O(condition), the Node status condition C(GpurackValidated) follows O(validation) as well
    (C(True)/C(ChecksPassed), or C(False)/C(ChecksFailed) with O(validation_reason) as its message), written
    through the Node's status subresource; C(lastTransitionTime) changes only when the status does, and an
    unchanged condition is not written again (no heartbeat), so a re-run changes nothing.
  - Runs on the controller (delegated to C(localhost)) with an admin kubeconfig. The patch carries the
    Node's C(resourceVersion), so a concurrent change (the node lifecycle controller edits taints too)
    makes the API server answer 409 Conflict; the module then reads the Node again and re-plans, up to
    O(retries) times.
version_added: "0.1.0"
author: gpurack maintainers (@gpurack)
extends_documentation_fragment:
  - gpurack.bootstrap.node_api
options:
  name:
    description: Name of the Node (the node's C(nodeRegistration.name), normally the inventory hostname).
    type: str
    required: true
  labels:
    description:
      - Every label gpurack wants on the Node, key to value.
      - Restricted keys such as C(node-role.kubernetes.io/gpu) are allowed; values may be empty.
      - A value of null leaves that label as it is (set and owned when the Node has it, absent when not),
        for what gpurack cannot know in this run, such as the topology of a node the fabric read did not see.
    type: dict
    default: {}
  taints:
    description:
      - Every taint gpurack wants on the Node, each with C(key), C(value) (optional) and C(effect)
        (C(NoSchedule), C(PreferNoSchedule) or C(NoExecute)).
      - Must not contain C(gpurack.io/validating); use O(validation).
    type: list
    elements: dict
    default: []
  validation:
    description: The validation verdict, which the C(gpurack.io/validating:NoSchedule) taint follows.
    type: str
    choices: [pass, fail, unknown]
    default: unknown
  validation_reason:
    description:
      - Why validation failed, for the annotation C(gpurack.io/validation-failed) with O(validation=fail).
      - Made one line of at most 1000 characters; C(validation failed) when empty.
    type: str
    default: ""
  condition:
    description:
      - Also set the Node condition C(GpurackValidated) from O(validation).
      - Needs the permission to patch C(nodes/status), which the admin kubeconfig has.
      - O(validation=unknown) leaves the condition as it is.
    type: bool
    default: false
  retries:
    description: How many times to read and re-plan after a 409 Conflict.
    type: int
    default: 5
attributes:
  check_mode:
    support: full
    description: Reads the Node and reports what would change without patching it.
  diff_mode:
    support: full
    description:
      - Shows the owned labels, the owned and validating taints and the gpurack annotations, and with
        O(condition) the C(GpurackValidated) condition (type, status, reason, message).
notes:
  - Node C(spec.taints) has no patch strategy, so the module sends the whole new taint list.
  - The ownership rules are in C(docs/node-labels.md) of the collection.
"""

EXAMPLES = r"""
- name: Set the node's labels and taints, keeping it tainted until validation passes
  gpurack.bootstrap.k8s_node_metadata:
    kubeconfig: ~/.kube/gpurack-kubernetes.conf
    name: "{{ inventory_hostname }}"
    labels:
      gpurack.io/pool: h200-train-a
      node-role.kubernetes.io/gpu: ""
    taints:
      - {key: gpurack.io/reserved, value: research, effect: NoSchedule}
  delegate_to: localhost
  become: false

- name: Lift the validating taint after the checks passed
  gpurack.bootstrap.k8s_node_metadata:
    kubeconfig: ~/.kube/gpurack-kubernetes.conf
    name: "{{ inventory_hostname }}"
    labels: "{{ __node_labels_labels }}"
    taints: "{{ __node_labels_taints }}"
    validation: pass
  delegate_to: localhost
  become: false
"""

RETURN = r"""
node:
  description: Name of the Node.
  returned: always
  type: str
  sample: gpu01
ansible_facts:
  description:
    - C(gpurack_node_metadata_changed=true) on the host the task runs for (also when delegated),
      when its labels, taints or annotations changed (or would, in check mode). The validation
      role then reads the node again rather than reuse preflight's reading, since a label such
      as C(nvidia.com/mig.config) may have the GPU Operator repartition the GPUs.
  returned: when the labels, taints or annotations changed
  type: dict
  sample: {gpurack_node_metadata_changed: true}
labels:
  description: All labels of the Node after the change (or, in check mode, as they would be).
  returned: success
  type: dict
  sample: {gpurack.io/pool: h200-train-a, kubernetes.io/hostname: gpu01, node-role.kubernetes.io/gpu: ""}
taints:
  description: All taints of the Node after the change (C(value) is empty when unset).
  returned: success
  type: list
  elements: dict
  sample: [{key: gpurack.io/validating, value: "", effect: NoSchedule}]
annotations:
  description: The C(gpurack.io/*) annotations of the Node after the change.
  returned: success
  type: dict
  sample:
    gpurack.io/managed-labels: node-role.kubernetes.io/gpu
    gpurack.io/validation-failed: "gpu.count: 1 GPUs found, expected 8"
condition:
  description: The C(GpurackValidated) condition after the change (or, in check mode, as it would be).
  returned: when O(condition) is true
  type: dict
  sample:
    type: GpurackValidated
    status: "False"
    reason: ChecksFailed
    message: "gpu.count: 1 GPUs found, expected 8"
    lastHeartbeatTime: "2026-12-01T10:00:00Z"
    lastTransitionTime: "2026-12-01T10:00:00Z"
diff:
  description: Owned labels, owned and validating taints, and gpurack annotations before and after.
  returned: when diff mode is on
  type: dict
  sample:
    before: {labels: {}, taints: ["gpurack.io/validating:NoSchedule"], annotations: {}}
    after: {labels: {gpurack.io/pool: h200-train-a}, taints: [], annotations: {}}
"""

import traceback
from datetime import datetime, timezone
from typing import Any

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels import PREFIX
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node import (
    ConditionPlan,
    ConflictError,
    Desired,
    KubeconfigError,
    Synced,
    api_error_text,
    conditions_from_node,
    core_v1,
    desired_errors,
    missing_node_text,
    plan_condition,
    sync_metadata,
)

ARGUMENT_SPEC: dict[str, Any] = {
    "kubeconfig": {"type": "path", "required": True},
    "context": {"type": "str"},
    "name": {"type": "str", "required": True},
    "labels": {"type": "dict", "default": {}},
    "taints": {"type": "list", "elements": "dict", "default": []},
    "validation": {"type": "str", "choices": ["pass", "fail", "unknown"], "default": "unknown"},
    "validation_reason": {"type": "str", "default": ""},
    "condition": {"type": "bool", "default": False},
    "retries": {"type": "int", "default": 5},
}


class _NodeApi:
    """The one Node's API calls; every failure ends the module with one clear message."""

    def __init__(self, module: AnsibleModule) -> None:
        self.module = module
        self.name, self.kubeconfig = module.params["name"], module.params["kubeconfig"]
        self.where = f"node {self.name} (kubeconfig {self.kubeconfig})"
        try:
            kube = core_v1(self.kubeconfig, module.params["context"])
        except ImportError:
            module.fail_json(msg=missing_required_lib("kubernetes"), exception=traceback.format_exc())
        except KubeconfigError as exc:
            module.fail_json(msg=str(exc))
        self.client, self.api = kube.api_client, kube.core
        self.api_exception, self.http_error = kube.api_exception, kube.http_error

    def call(self, doing: str, request: Any, *args: Any, conflict_ok: bool = False) -> dict[str, Any] | None:
        """The Node the API returns as a dict; None on a 409 when `conflict_ok`."""
        try:
            node: dict[str, Any] = self.client.sanitize_for_serialization(request(self.name, *args))
        except self.api_exception as exc:
            if exc.status == 404:
                self.module.fail_json(msg=missing_node_text(self.name, self.kubeconfig), status=404)
            if exc.status == 409 and conflict_ok:
                return None
            self.module.fail_json(
                msg=f"Could not {doing} {self.where}: {api_error_text(exc)}",
                status=exc.status,
                reason=exc.reason,
            )
        except self.http_error as exc:
            self.module.fail_json(msg=f"Could not reach the API server to {doing} {self.where}: {exc}")
        return node


def _reconcile(module: AnsibleModule, nodes: _NodeApi) -> Synced:
    """Read, plan and patch the labels, taints and annotations until a patch lands (or check mode)."""
    p = module.params
    desired = Desired(p["labels"], p["taints"], p["validation"], p["validation_reason"])
    try:
        return sync_metadata(
            None,
            desired,
            read=lambda: nodes.call("read", nodes.api.read_node) or {},
            patch=lambda body: nodes.call("patch", nodes.api.patch_node, body, conflict_ok=True),
            check_mode=module.check_mode,
            retries=p["retries"],
        )
    except ConflictError as exc:
        module.fail_json(msg=f"Could not patch {nodes.where}: {exc}", status=409)
    raise AssertionError("unreachable: fail_json exits")  # pragma: no cover


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    p = module.params
    name = p["name"]
    if errors := desired_errors(p["labels"], p["taints"]):
        module.fail_json(msg=f"Invalid labels or taints for node {name}: " + "; ".join(errors), errors=errors)
    nodes = _NodeApi(module)
    synced = _reconcile(module, nodes)
    steps, after = synced.steps, synced.after
    result: dict[str, Any] = {
        "changed": steps.changed,
        "node": name,
        "labels": after.labels,
        "taints": after.taints,
        "annotations": {k: v for k, v in sorted(after.annotations.items()) if k.startswith(PREFIX)},
    }
    diff: dict[str, Any] = {"before_header": f"node/{name}", "after_header": f"node/{name}"}
    diff.update(before=steps.before, after=steps.after)
    if p["condition"]:
        status = _sync_condition(module, nodes, synced.node)
        result["changed"] = steps.changed or status.changed
        result["condition"] = status.condition
        diff.update(
            before={**steps.before, "condition": status.before},
            after={**steps.after, "condition": status.after},
        )
    if steps.changed:  # for the validation role: a label (nvidia.com/mig.config) may remake the GPUs
        result["ansible_facts"] = {"gpurack_node_metadata_changed": True}
    if module._diff:
        result["diff"] = diff
    module.exit_json(**result)


def _sync_condition(module: AnsibleModule, nodes: _NodeApi, node: dict[str, Any]) -> ConditionPlan:
    """Plan GpurackValidated on the Node as read, and patch the status subresource unless check mode.

    The patch carries only our condition: conditions merge by type, so the kubelet's stay.
    """
    p = module.params
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: UP017 - modules keep 3.9 syntax
    status = plan_condition(conditions_from_node(node), p["validation"], p["validation_reason"], now)
    if status.changed and not module.check_mode:
        nodes.call("patch the status of", nodes.api.patch_node_status, status.patch)
    return status


if __name__ == "__main__":
    main()
