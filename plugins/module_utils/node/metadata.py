# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Plan the gpurack labels, taints and annotations of a Kubernetes Node (pure, stdlib only).

gpurack owns every `gpurack.io/*` label and taint (except `gpurack.io/validating`, which
follows the validation verdict) plus the other keys it set before, which it lists in the
annotations `gpurack.io/managed-labels` and `gpurack.io/managed-taints`. Everything else on
the Node (the kubelet's labels, node.kubernetes.io/* taints, an admin's cordon taints) is
left as it is. `plan` says what to patch; it never talks to the API server.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import (
    PREFIX,
    TAINT_EFFECTS,
    VALIDATING_TAINT,
    LabelError,
    label_errors,
    label_key_error,
    label_value_error,
)

MANAGED_LABELS = f"{PREFIX}managed-labels"
MANAGED_TAINTS = f"{PREFIX}managed-taints"
VALIDATION_FAILED = f"{PREFIX}validation-failed"
VALIDATIONS = ("pass", "fail", "unknown")
REASON_MAX = 1000
DEFAULT_REASON = "validation failed"

_VALIDATING_KEY = VALIDATING_TAINT["key"]
_VALIDATING_EFFECT = VALIDATING_TAINT["effect"]
_TAINT_FIELDS = ("key", "value", "effect")

Taint = dict[str, str]


@dataclass(frozen=True, slots=True)
class NodeMetadata:
    """The parts of a Node this module reads and writes; taints normalised by `normalise_taint`."""

    labels: dict[str, str]
    annotations: dict[str, str]
    taints: list[Taint]


@dataclass(frozen=True, slots=True)
class Plan:
    """What to change on a Node: the patch body, the state after it and views for a diff."""

    changed: bool
    patch: dict[str, Any]
    result: NodeMetadata
    before: dict[str, Any]
    after: dict[str, Any]


def normalise_taint(raw: object) -> Taint:
    """A taint as {key, value, effect} ("" for a missing value), keeping `timeAdded` if set.

    Accepts the API's camelCase (`timeAdded`) and the Python client's `time_added`.

    Raises:
        LabelError: `raw` is not a mapping with a key and an effect.
    """
    if not isinstance(raw, Mapping) or not raw.get("key") or not raw.get("effect"):
        raise LabelError(f"taint {raw!r} must be a mapping with a key and an effect")
    value = raw.get("value")
    taint = {
        "key": str(raw["key"]),
        "value": "" if value is None else str(value),
        "effect": str(raw["effect"]),
    }
    added = raw.get("timeAdded") or raw.get("time_added")
    if added:
        taint["timeAdded"] = str(added)
    return taint


def node_metadata(current: Mapping[str, Any] | NodeMetadata) -> NodeMetadata:
    """`current` ({labels, annotations, taints}, any of them missing or None) as NodeMetadata.

    Raises:
        LabelError: a taint is not a mapping with a key and an effect.
    """
    if isinstance(current, NodeMetadata):
        return current
    return NodeMetadata(
        labels={str(k): str(v) for k, v in (current.get("labels") or {}).items()},
        annotations={str(k): str(v) for k, v in (current.get("annotations") or {}).items()},
        taints=[normalise_taint(t) for t in current.get("taints") or []],
    )


def metadata_from_node(node: Mapping[str, Any]) -> dict[str, Any]:
    """{labels, annotations, taints} of a Node as the API serialises it (metadata, spec)."""
    metadata = node.get("metadata") or {}
    spec = node.get("spec") or {}
    return {
        "labels": metadata.get("labels") or {},
        "annotations": metadata.get("annotations") or {},
        "taints": spec.get("taints") or [],
    }


def reason_text(reason: object) -> str:
    """`reason` on one line, at most REASON_MAX characters; DEFAULT_REASON when empty."""
    text = " ".join(str(reason or "").split())
    if len(text) > REASON_MAX:
        text = text[: REASON_MAX - 3].rstrip() + "..."
    return text or DEFAULT_REASON


def desired_errors(labels: object, taints: object) -> list[str]:
    """Every problem with the desired labels and taints; [] when both are usable.

    Restricted label keys (node-role.kubernetes.io/*) are allowed: the controller sets them. A
    label desired as None is one to leave as it is (see `plan`): only its key is checked.
    """
    if isinstance(labels, Mapping):
        labels = {k: "" if v is None else v for k, v in labels.items()}
    errors = label_errors(labels, allow_restricted=True)
    if not isinstance(taints, list):
        return [*errors, f"taints must be a list of {{key, value, effect}}, got {type(taints).__name__}"]
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        where = f"taints[{i}]"
        if not isinstance(taint, Mapping):
            errors.append(f"{where} must be a mapping with key, value and effect")
            continue
        unknown = sorted(map(str, set(taint) - set(_TAINT_FIELDS)))
        if unknown:
            errors.append(f"{where}: unknown fields {', '.join(unknown)}")
        key, effect = taint.get("key"), taint.get("effect")
        value = "" if taint.get("value") is None else taint.get("value")
        if key == _VALIDATING_KEY:
            errors.append(f"{where}: {_VALIDATING_KEY} follows the validation verdict; it cannot be desired")
            continue
        if err := label_key_error(key):
            errors.append(f"{where}: {err.replace('label key', 'taint key')}")
        if err := label_value_error(value):
            errors.append(f"{where}: {err.replace('label value', 'taint value')}")
        if effect not in TAINT_EFFECTS:
            errors.append(f"{where}: effect must be one of {', '.join(TAINT_EFFECTS)}; got {effect!r}")
        if (str(key), str(effect)) in seen:
            errors.append(f"{where}: {key}:{effect} is listed twice")
        seen.add((str(key), str(effect)))
    return errors


def _listed(annotations: Mapping[str, str], key: str) -> set[str]:
    return {k.strip() for k in annotations.get(key, "").split(",") if k.strip()}


def _same(a: Taint, b: Taint) -> bool:
    return all(a[f] == b[f] for f in _TAINT_FIELDS)


def _taint_text(taint: Taint) -> str:
    """kubectl's notation: key=value:effect, or key:effect without a value."""
    value = f"={taint['value']}" if taint["value"] else ""
    return f"{taint['key']}{value}:{taint['effect']}"


def api_taint(taint: Taint) -> dict[str, str]:
    """A taint as the API takes it: no empty value; timeAdded kept so NoExecute timing survives."""
    return {k: v for k, v in taint.items() if k != "value" or v}


def _plan_taints(current: list[Taint], desired: list[Taint], owned: set[str], validation: str) -> list[Taint]:
    wanted = {(t["key"], t["effect"]): t for t in desired}
    placed: set[tuple[str, str]] = set()
    taints: list[Taint] = []
    for taint in current:
        key, ident = taint["key"], (taint["key"], taint["effect"])
        if key == _VALIDATING_KEY:
            if validation != "pass":
                taints.append(taint)
        elif key in owned:
            # A desired taint keeps its place (and its timeAdded when unchanged) in the list.
            if ident in wanted and ident not in placed:
                new = dict(wanted[ident])
                if _same(new, taint) and "timeAdded" in taint:
                    new["timeAdded"] = taint["timeAdded"]
                taints.append(new)
                placed.add(ident)
        else:
            taints.append(taint)
    taints.extend(dict(t) for ident, t in wanted.items() if ident not in placed)
    if validation == "fail" and not any(
        t["key"] == _VALIDATING_KEY and t["effect"] == _VALIDATING_EFFECT for t in taints
    ):
        taints.append(dict(VALIDATING_TAINT))
    return taints


def _view(node: NodeMetadata, label_keys: Iterable[str], taint_keys: set[str]) -> dict[str, Any]:
    return {
        "labels": {k: node.labels[k] for k in sorted(label_keys) if k in node.labels},
        "taints": [
            _taint_text(t) for t in node.taints if t["key"] in taint_keys or t["key"] == _VALIDATING_KEY
        ],
        "annotations": {k: v for k, v in sorted(node.annotations.items()) if k.startswith(PREFIX)},
    }


def plan(
    current: Mapping[str, Any] | NodeMetadata,
    desired_labels: Mapping[str, str | None],
    desired_taints: list[Mapping[str, Any]],
    validation: str = "unknown",
    reason: str = "",
) -> Plan:
    """The patch that makes the Node's gpurack labels, taints and annotations the desired ones.

    `validation` pass lifts `gpurack.io/validating:NoSchedule` and drops the
    `gpurack.io/validation-failed` annotation; fail puts both in place (the annotation is
    `reason` on one line); unknown leaves both exactly as they are.

    Raises:
        ValueError: `validation` is not pass, fail or unknown; or (LabelError) a desired label
            or taint is invalid, including a desired `gpurack.io/validating` taint.
    """
    if validation not in VALIDATIONS:
        raise ValueError(f"validation must be one of {', '.join(VALIDATIONS)}; got {validation!r}")
    node = node_metadata(current)
    labels = _desired_labels(node, desired_labels, desired_taints)
    taints = [normalise_taint(t) for t in desired_taints]
    owned_labels, label_patch = _label_patch(node, labels)
    owned_taints, new_taints, taints_changed = _taint_plan(node, taints, validation)
    annotation_patch = _annotation_patch(node, labels, taints, validation, reason)

    patch: dict[str, Any] = {}
    if metadata := {k: v for k, v in (("labels", label_patch), ("annotations", annotation_patch)) if v}:
        patch["metadata"] = metadata
    if taints_changed:
        # The whole list: Node spec.taints is replaced, never merged, by a patch.
        patch["spec"] = {"taints": [api_taint(t) for t in new_taints]}

    result = NodeMetadata(
        labels=_patched(node.labels, label_patch),
        annotations=_patched(node.annotations, annotation_patch),
        taints=new_taints if taints_changed else [dict(t) for t in node.taints],
    )
    label_keys = owned_labels | labels.keys()
    return Plan(
        changed=bool(patch),
        patch=patch,
        result=result,
        before=_view(node, label_keys, owned_taints),
        after=_view(result, label_keys, owned_taints),
    )


def _desired_labels(
    node: NodeMetadata, desired: Mapping[str, str | None], taints: list[Mapping[str, Any]]
) -> dict[str, str]:
    """The labels to have: the desired ones, and each desired as None as the Node has it (kept,
    and still owned; absent when the Node lacks it).

    Raises:
        LabelError: a desired label or taint is invalid (desired_errors).
    """
    kept = {str(k) for k, v in desired.items() if v is None} if isinstance(desired, Mapping) else set()
    given = {k: v for k, v in desired.items() if k not in kept} if kept else desired
    if errors := desired_errors(given, taints):
        raise LabelError("; ".join(errors))
    labels = {k: node.labels[k] for k in sorted(kept) if k in node.labels}
    labels.update({str(k): str(v) for k, v in given.items()})
    return labels


def _label_patch(node: NodeMetadata, labels: dict[str, str]) -> tuple[set[str], dict[str, str | None]]:
    """The label keys gpurack owns on the Node, and the patch (None removes) to the desired labels."""
    owned = {k for k in node.labels if k.startswith(PREFIX)} | _listed(node.annotations, MANAGED_LABELS)
    patch: dict[str, str | None] = {k: None for k in sorted(owned - labels.keys()) if k in node.labels}
    patch.update({k: v for k, v in labels.items() if node.labels.get(k) != v})
    return owned, patch


def _taint_plan(
    node: NodeMetadata, taints: list[dict[str, str]], validation: str
) -> tuple[set[str], list[dict[str, str]], bool]:
    """The taint keys gpurack owns, the Node's whole new taint list, and whether it changed."""
    # Claiming a key claims every taint with it, so a foreign taint with the same key and
    # another effect goes now rather than on the next run (idempotence).
    owned = (
        {t["key"] for t in node.taints if t["key"].startswith(PREFIX)}
        | _listed(node.annotations, MANAGED_TAINTS)
        | {t["key"] for t in taints}
    ) - {_VALIDATING_KEY}
    new = _plan_taints(node.taints, taints, owned, validation)
    changed = len(new) != len(node.taints) or not all(
        _same(a, b) for a, b in zip(new, node.taints, strict=False)
    )
    return owned, new, changed


def _annotation_patch(
    node: NodeMetadata, labels: dict[str, str], taints: list[dict[str, str]], validation: str, reason: str
) -> dict[str, str | None]:
    """The patch of gpurack's annotations: the foreign keys it manages and the failed validation's reason."""
    wanted: dict[str, str | None] = {
        MANAGED_LABELS: ",".join(sorted(k for k in labels if not k.startswith(PREFIX))) or None,
        MANAGED_TAINTS: ",".join(sorted({t["key"] for t in taints if not t["key"].startswith(PREFIX)}))
        or None,
    }
    if validation == "pass":
        wanted[VALIDATION_FAILED] = None
    elif validation == "fail":
        wanted[VALIDATION_FAILED] = reason_text(reason)
    return {
        k: v
        for k, v in wanted.items()
        if node.annotations.get(k) != v and (v is not None or k in node.annotations)
    }


def _patched(current: Mapping[str, str], patch: Mapping[str, str | None]) -> dict[str, str]:
    merged: dict[str, str] = dict(current)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged
