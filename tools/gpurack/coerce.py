"""Reading untrusted JSON-shaped data (facts, API objects, inventory values) without a KeyError
or TypeError; `plain` turns what YAML and Ansible give into JSON data or says where it cannot.

Only the readers whose meaning is the same everywhere live here; a number or text reader
differs by caller (strip or not, None or 0 when missing) and stays with its caller.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import date, time
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


class NotPlainDataError(ValueError):
    """A value that JSON cannot hold, at `path` inside the value given to `plain`."""

    def __init__(self, path: str, what: str) -> None:
        super().__init__(f"{path} {what}" if path else what)
        self.path = path
        self.what = what


def plain(value: Any, path: str = "") -> Any:
    """`value` as plain JSON data: str, int, float, bool, None, lists, and mappings with text keys.

    What YAML or Ansible can hold and JSON cannot is refused, naming where it is (`path` then
    `[0]` and `.key` inside): a date or time (YAML reads an unquoted `2026-01-01` as one), a
    number that is not finite or too large for a float, a set, bytes or any other object.

    Raises:
        NotPlainDataError: the first such value.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(_finite(value, path))
    if isinstance(value, float):
        return float(_finite(value, path))
    if isinstance(value, Mapping):
        return {
            _key(key, path): plain(item, f"{path}.{key}" if path else str(key)) for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [plain(item, f"{path}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, (date, time)):
        raise NotPlainDataError(
            path,
            f"is the date or time {value.isoformat()}, not text (YAML reads an unquoted date so: quote it)",
        )
    raise NotPlainDataError(path, f"is a {type(value).__name__}, which is not JSON data")


def _finite(value: float, path: str) -> float:
    try:
        number = float(value)
    except OverflowError:
        digits = math.floor(math.log10(abs(value))) + 1  # str() refuses more than 4300 digits
        raise NotPlainDataError(path, f"is a number of {digits} digits, too large") from None
    if not math.isfinite(number):
        raise NotPlainDataError(path, f"is {value}, not a finite number")
    return value


def _key(key: object, path: str) -> str:
    """A mapping key as JSON writes it (`1` -> "1", `true` -> "true"); refused unless a scalar."""
    if isinstance(key, str):
        return str(key)
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(plain(key, path))
    raise NotPlainDataError(path, f"has the key {key!r}, which is not text")
