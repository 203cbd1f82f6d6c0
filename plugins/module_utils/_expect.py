# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The expectations schema (`gpurack_expect`, `--expect FILE`): validation with full paths.

Every problem is reported at once, each as `<path>: <what was expected>, got <value>`,
so an operator fixes a pool's YAML in one pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Validator = Callable[[object], str | None]
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


def _one_of(*allowed: object) -> Validator:
    def check(value: object) -> str | None:
        if any(value == a and type(value) is type(a) for a in allowed):
            return None
        return "expected one of " + ", ".join(str(a) for a in allowed)

    return check


_VERSION = re.compile(r"^\d+(\.\d+)*$")


def _version_str(value: object) -> str | None:
    if isinstance(value, str) and _VERSION.match(value.strip()):
        return None
    # YAML reads 13.0 as a float and 580.95 as 580.95 (or loses a trailing 0): ask for quotes.
    return "expected a version string such as '580.159.04' (quote it in YAML)"


def _branch(value: object) -> str | None:
    if _is_int(value) and value > 0:  # type: ignore[operator]
        return None
    if isinstance(value, str) and value.strip().isdigit():
        return None
    return "expected a driver branch such as '580'"


SCHEMA: Schema = {
    "gpu": {
        "count": _non_negative_int,
        "model": _non_empty_str,
        "min_memory_mib": _non_negative_int,
        "pcie": {"gen": _one_of(1, 2, 3, 4, 5, 6), "width": _one_of(1, 2, 4, 8, 16, 32)},
        "nvlinks_per_gpu": _non_negative_int,
    },
    "rdma": {
        "ports": _non_negative_int,
        "rate_gbps": _positive_number,
        "link_layer": _one_of("InfiniBand", "Ethernet"),
    },
    "numa_nodes": _positive_int,
    "nvme": {"count": _non_negative_int},
    "driver": {"version": _version_str, "branch": _branch},
    "cuda": {"version": _version_str},
    "os": {"cgroup_version": _one_of(1, 2)},
}


def _validate(value: object, schema: Schema, path: str) -> list[str]:
    if not isinstance(value, Mapping):
        return [f"{path}: expected a mapping, got {value!r}"]
    errors: list[str] = []
    for key, item in value.items():
        where = f"{path}.{key}"
        rule = schema.get(key) if isinstance(key, str) else None
        if rule is None:
            errors.append(f"{where}: unknown key (known: {', '.join(schema)})")
        elif isinstance(rule, Mapping):
            errors.extend(_validate(item, rule, where))
        elif (problem := rule(item)) is not None:
            errors.append(f"{where}: {problem}, got {item!r}")
    return errors


def validate_expect(expect: object, path: str = "gpurack_expect") -> list[str]:
    """Every problem with an expectations mapping, each prefixed by its full path; [] when valid."""
    if expect is None:
        return []
    return _validate(expect, SCHEMA, path)


def get(expect: Mapping[str, Any], dotted: str) -> Any:
    """The value at a dotted path of `expect` (e.g. 'gpu.pcie.gen'), None when absent."""
    node: Any = expect
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node
