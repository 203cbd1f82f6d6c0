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
