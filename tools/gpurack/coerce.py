"""Reading untrusted JSON-shaped data (facts, API objects) without a KeyError or TypeError.

Only the readers whose meaning is the same everywhere live here; a number or text reader
differs by caller (strip or not, None or 0 when missing) and stays with its caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def mapping(value: Any) -> Mapping[str, Any]:
    """`value` if it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def mappings(value: Any) -> list[Mapping[str, Any]]:
    """The mappings among the items of `value` if it is a list, else none."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


# Ansible's own words for a boolean: a fact templated from a string, or set as `key=value`,
# reaches the events as text.
_TRUE = frozenset({"true", "yes", "on", "y", "t", "1"})
_FALSE = frozenset({"false", "no", "off", "n", "f", "0"})


def flag(value: Any) -> bool | None:
    """`value` as a boolean, read as Ansible reads one (True, "True", "yes", 1); None when it is none."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        return True if word in _TRUE else False if word in _FALSE else None
    return None
