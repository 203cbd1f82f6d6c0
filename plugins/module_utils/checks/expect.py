# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Expectation keys (`gpurack_expect`, `--expect FILE`) and their validation with full paths.

A check's spec declares the keys it reads as `ExpectKey`s; the schema is built from those
(`checks.SCHEMA`), so a key exists exactly when a check reads it. Every problem is reported
at once, each as `<path>: <what was expected>, got <value>`, so an operator fixes a pool's
YAML in one pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

Validator = Callable[[object], "str | None"]
Schema = Mapping[str, "Validator | Schema"]


def _is_int(value: object) -> bool:
    # YAML `true` is a bool, and bool is an int subclass: refuse it explicitly.
    return isinstance(value, int) and not isinstance(value, bool)


def _non_negative_int(value: object) -> str | None:
    return None if _is_int(value) and value >= 0 else "expected a non-negative integer"  # type: ignore[operator]


def _positive_int(value: object) -> str | None:
    return None if _is_int(value) and value > 0 else "expected a positive integer"  # type: ignore[operator]


def _positive_number(value: object) -> str | None:
    ok = (_is_int(value) or isinstance(value, float)) and value > 0  # type: ignore[operator]
    return None if ok else "expected a positive number"


def _non_empty_str(value: object) -> str | None:
    return None if isinstance(value, str) and value.strip() else "expected a non-empty string"


_VERSION = re.compile(r"^\d+(\.\d+)*$")


def _version_str(value: object) -> str | None:
    if isinstance(value, str) and _VERSION.match(value.strip()):
        return None
    # YAML reads 13.0 as a float and 580.95 as 580.95 (or loses a trailing 0): ask for quotes.
    return "expected a version string such as '580.159.04' (quote it in YAML)"


def _branch(value: object) -> str | None:
    if _is_int(value) and value > 0:  # type: ignore[operator]
        return None
    if isinstance(value, str) and value.strip().isdecimal():
        return None
    return "expected a driver branch such as '580'"


# kind -> (validator, Ansible argument-spec type)
_KINDS: Mapping[str, tuple[Validator, str]] = {
    "count": (_non_negative_int, "int"),
    "positive_int": (_positive_int, "int"),
    "number": (_positive_number, "float"),
    "text": (_non_empty_str, "str"),
    "version": (_version_str, "str"),
    "branch": (_branch, "raw"),
}


@dataclass(frozen=True)
class ExpectKey:
    """One expectation key a check reads: dotted path, value kind (or choices), description."""

    path: str
    kind: str
    description: str
    choices: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if self.kind != "choice" and self.kind not in _KINDS:
            raise ValueError(f"{self.path}: unknown expectation kind {self.kind!r}")

    @property
    def validator(self) -> Validator:
        """The function that names what is wrong with a value (None when it is valid)."""
        if self.kind == "choice":
            return _one_of(*self.choices)
        return _KINDS[self.kind][0]

    @property
    def arg_type(self) -> str:
        """The type of the key in an Ansible argument spec."""
        if self.kind == "choice":
            return "int" if all(_is_int(c) for c in self.choices) else "str"
        return _KINDS[self.kind][1]


def _is_bool(value: object) -> bool:
    return isinstance(value, bool)


def _one_of(*allowed: object) -> Validator:
    def check(value: object) -> str | None:
        # The same type, not only an equal value (True is not 1, 5.0 is not 5); a subclass counts,
        # as Ansible hands a filter its own int and str types.
        if any(value == a and isinstance(value, type(a)) and _is_bool(value) == _is_bool(a) for a in allowed):
            return None
        return "expected one of " + ", ".join(str(a) for a in allowed)

    return check


def schema_from(keys: Iterable[ExpectKey], order: Iterable[str] = ()) -> dict[str, Any]:
    """The nested schema of `keys`; top-level groups in `order` first, then as first seen.

    Raises:
        ValueError: two keys at the same path differ, or a key is also a group.
    """
    seen: dict[str, ExpectKey] = {}
    schema: dict[str, Any] = {name: {} for name in order}
    for key in keys:
        if key.path in seen:
            if seen[key.path] != key:
                raise ValueError(f"expectation {key.path} is declared twice, differently")
            continue
        seen[key.path] = key
        *groups, leaf = key.path.split(".")
        node = schema
        for group in groups:
            node = node.setdefault(group, {})
            if not isinstance(node, dict):
                raise ValueError(f"expectation {key.path}: {group} is a key, not a group")
        node[leaf] = key.validator
    # A top-level leaf (numa_nodes) was seeded as a group by `order`: it is set above then.
    return {name: rule for name, rule in schema.items() if rule != {}}


def validate(value: object, schema: Schema, path: str) -> list[str]:
    """Every problem of `value` against `schema`, each prefixed by its full path; [] when valid."""
    if not isinstance(value, Mapping):
        return [f"{path}: expected a mapping, got {value!r}"]
    errors: list[str] = []
    for key, item in value.items():
        where = f"{path}.{key}"
        rule = schema.get(key) if isinstance(key, str) else None
        if rule is None:
            errors.append(f"{where}: unknown key (known: {', '.join(schema)})")
        elif isinstance(rule, Mapping):
            errors.extend(validate(item, rule, where))
        elif (problem := rule(item)) is not None:
            errors.append(f"{where}: {problem}, got {item!r}")
    return errors


def get(expect: Mapping[str, Any], dotted: str) -> Any:
    """The value at a dotted path of `expect` (e.g. 'gpu.pcie.gen'), None when absent."""
    node: Any = expect
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node
