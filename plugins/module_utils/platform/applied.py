# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What one kubernetes.core.k8s call over a list of objects did, object by object (the k8s_apply
action's result): which changed, their diffs with a header each, and what failed.

kubernetes.core.k8s applies a list of definitions in one process (one Python start, one API
client) and, with continue_on_error, reports each definition's outcome; a list of
{before_header, before, after} is what Ansible's --diff prints one after another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def object_name(obj: Mapping[str, Any]) -> str:
    """`Kind namespace/name`, or `Kind name` for a cluster-scoped object."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    where = f"{namespace}/{meta.get('name')}" if namespace else str(meta.get("name"))
    return f"{obj.get('kind')} {where}"


def per_object(
    objects: Sequence[Mapping[str, Any]], module_result: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """kubernetes.core.k8s's result for each object, in order (one object's result is not nested)."""
    if len(objects) == 1:
        return [dict(module_result)]
    results = (module_result.get("result") or {}).get("results") or []
    return [dict(r) for r in results]


def _namespace_created_here(error: Mapping[str, Any], obj: Mapping[str, Any], created: set[str]) -> bool:
    """In check mode, an API server's dry run of an object cannot find a namespace that the same
    run would only create: that object would be created too."""
    namespace = (obj.get("metadata") or {}).get("namespace")
    message = str(error.get("msg", "")) + str(error.get("reason", ""))
    return bool(namespace) and namespace in created and "not found" in message.lower()


def summarise(
    objects: Sequence[Mapping[str, Any]], module_result: Mapping[str, Any], *, check_mode: bool, diff: bool
) -> dict[str, Any]:
    """The action's result: changed, the changed and failed objects by name, and the diffs."""
    if module_result.get("failed") and not (module_result.get("result") or {}).get("results"):
        return {
            "failed": True,
            "changed": False,
            "msg": str(module_result.get("msg", "kubernetes.core.k8s failed")),
        }
    outcomes = per_object(objects, module_result)
    if len(outcomes) != len(objects):
        return {
            "failed": True,
            "changed": False,
            "msg": f"kubernetes.core.k8s reported {len(outcomes)} results for {len(objects)} objects",
        }
    created = {str((o.get("metadata") or {}).get("name")) for o in objects if o.get("kind") == "Namespace"}
    changed: list[str] = []
    failed: list[str] = []
    diffs: list[dict[str, Any]] = []
    for obj, outcome in zip(objects, outcomes, strict=True):
        name = object_name(obj)
        error = outcome.get("error") or ({"msg": outcome.get("msg")} if outcome.get("failed") else None)
        if error:
            if check_mode and _namespace_created_here(error, obj, created):
                changed.append(name)
                continue
            failed.append(f"{name}: {error.get('msg') or error}")
            continue
        if outcome.get("changed"):
            changed.append(name)
            found = outcome.get("diff") or {}
            if diff and isinstance(found, Mapping) and ("before" in found or "after" in found):
                diffs.append(_diff(name, found))
    out: dict[str, Any] = {"changed": bool(changed), "changed_objects": changed, "objects": len(objects)}
    if diffs:
        out["diff"] = diffs
    out.update(_message(len(objects), changed, failed, check_mode))
    return out


def _diff(name: str, found: Mapping[str, Any]) -> dict[str, Any]:
    """One object's --diff entry, headed by its name."""
    return {
        "before_header": name,
        "after_header": name,
        "before": found.get("before") or {},
        "after": found.get("after") or {},
    }


def _message(count: int, changed: list[str], failed: list[str], check_mode: bool) -> dict[str, Any]:
    """The result's msg (and failed, failed_objects when an object failed)."""
    out: dict[str, Any] = {}
    if failed:
        out.update(
            failed=True,
            failed_objects=failed,
            msg=f"{len(failed)} of {count} objects failed: " + "; ".join(failed),
        )
    elif changed:
        verb = "would change" if check_mode else "changed"
        out["msg"] = f"{verb} {len(changed)} of {count}: {', '.join(changed)}"
    else:
        out["msg"] = f"all {count} objects as wanted"
    return out
