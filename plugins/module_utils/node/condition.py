# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Plan the Node condition `GpurackValidated` from the validation verdict (pure, stdlib only).

As node-problem-detector does, the verdict is also a condition in the Node's status, so
`kubectl describe node` says why a node keeps its gpurack.io/validating taint:

- pass: status True, reason ChecksPassed;
- fail: status False, reason ChecksFailed, message the failing checks (the reason the
  validation role gives, one line, at most REASON_MAX characters);
- unknown: the condition is left as it is.

`lastTransitionTime` changes only when the status does. `lastHeartbeatTime` is the time the
condition was last written: an unchanged verdict writes nothing (no heartbeat churn), so a
re-run is idempotent. The patch goes to the status subresource, where conditions merge by
type, so the kubelet's own conditions are never touched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.node.metadata import (
    VALIDATIONS,
    reason_text,
)

CONDITION_TYPE = "GpurackValidated"
REASON_PASSED = "ChecksPassed"
REASON_FAILED = "ChecksFailed"
PASSED_MESSAGE = "gpurack validation passed"
_COMPARED = ("status", "reason", "message")


@dataclass(frozen=True, slots=True)
class ConditionPlan:
    """The status patch ({} when nothing changes), the condition after it, and views for a diff."""

    changed: bool
    patch: dict[str, Any]
    condition: dict[str, str] | None
    before: dict[str, str] | None
    after: dict[str, str] | None


def conditions_from_node(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The conditions of a Node as the API serialises it (status.conditions)."""
    return list((node.get("status") or {}).get("conditions") or [])


def rfc3339(value: object) -> str:
    """A time as the API writes it (`...Z`); the Python client serialises UTC as `+00:00`."""
    text = str(value)
    return text[: -len("+00:00")] + "Z" if text.endswith("+00:00") else text


def find_condition(conditions: Sequence[Mapping[str, Any]]) -> dict[str, str] | None:
    """The GpurackValidated condition, its times in RFC 3339; None when the Node has none."""
    for condition in conditions:
        if condition.get("type") == CONDITION_TYPE:
            return {
                str(k): rfc3339(v) if k.endswith("Time") else str(v)
                for k, v in condition.items()
                if v is not None
            }
    return None


def _view(condition: Mapping[str, str] | None) -> dict[str, str] | None:
    return None if condition is None else {k: condition.get(k, "") for k in ("type", *_COMPARED)}


def plan_condition(
    conditions: Sequence[Mapping[str, Any]], validation: str, reason: str, now: str
) -> ConditionPlan:
    """What to write to the Node's status so that GpurackValidated follows `validation`.

    `now` is the RFC 3339 time written as lastHeartbeatTime (and lastTransitionTime when the
    status changes).

    Raises:
        ValueError: `validation` is not pass, fail or unknown.
    """
    if validation not in VALIDATIONS:
        raise ValueError(f"validation must be one of {', '.join(VALIDATIONS)}; got {validation!r}")
    current = find_condition(conditions)
    if validation == "unknown":
        return ConditionPlan(False, {}, current, _view(current), _view(current))
    passed = validation == "pass"
    wanted = {
        "type": CONDITION_TYPE,
        "status": "True" if passed else "False",
        "reason": REASON_PASSED if passed else REASON_FAILED,
        "message": PASSED_MESSAGE if passed else reason_text(reason),
    }
    if current is not None and all(current.get(k) == wanted[k] for k in _COMPARED):
        return ConditionPlan(False, {}, current, _view(current), _view(current))
    same_status = current is not None and current.get("status") == wanted["status"]
    transition = current.get("lastTransitionTime", now) if current is not None and same_status else now
    condition = {**wanted, "lastHeartbeatTime": now, "lastTransitionTime": transition}
    return ConditionPlan(
        changed=True,
        patch={"status": {"conditions": [condition]}},
        condition=condition,
        before=_view(current),
        after=_view(condition),
    )
