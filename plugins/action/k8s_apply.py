# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Apply a list of Kubernetes objects in one kubernetes.core.k8s call (docs: plugins/modules/k8s_apply.py)."""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import summarise


class ActionModule(ActionBase):  # type: ignore[misc]
    """Server-side apply of every object in one module run, reported object by object."""

    _VALID_ARGS = frozenset(("kubeconfig", "objects", "field_manager"))
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        args = self._task.args
        objects = args.get("objects")
        if not isinstance(objects, list) or not all(isinstance(o, dict) for o in objects):
            raise AnsibleActionFail("objects must be a list of Kubernetes objects (mappings)")
        if not objects:
            result.update(changed=False, changed_objects=[], objects=0, msg="no objects to apply")
            return result
        module_args = {
            "state": "present",
            "definition": objects,
            "continue_on_error": True,
            "server_side_apply": {
                "field_manager": str(args.get("field_manager") or "gpurack"),
                "force_conflicts": True,
            },
        }
        if args.get("kubeconfig"):
            module_args["kubeconfig"] = args["kubeconfig"]
        applied = self._execute_module(
            module_name="kubernetes.core.k8s", module_args=module_args, task_vars=task_vars
        )
        result.update(
            summarise(objects, applied, check_mode=bool(self._task.check_mode), diff=bool(self._task.diff))
        )
        return result
