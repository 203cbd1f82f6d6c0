# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What the platform parsers share: ntc-templates' TextFSM tables, and numbers read from them."""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils._errors import excerpt
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import SwitchOutputError

try:  # on the controller, with netmiko; the modules report its absence as one line
    from ntc_templates.parse import parse_output
except ImportError as exc:
    parse_output = None
    NTC_TEMPLATES_IMPORT_ERROR: ImportError | None = exc
else:
    NTC_TEMPLATES_IMPORT_ERROR = None


def table(platform: str, command: str, text: str) -> list[dict[str, Any]]:
    """ntc-templates' rows for `command`'s output on `platform`, keys in lower case.

    Raises:
        SwitchOutputError: ntc-templates is missing, or the output does not match its template.
    """
    if parse_output is None:
        raise SwitchOutputError(
            f"ntc-templates is not installed on the controller: {NTC_TEMPLATES_IMPORT_ERROR}"
        )
    try:
        rows = parse_output(platform=platform, command=command, data=text)
    except Exception as exc:  # TextFSM raises its own errors, and more than one kind
        raise SwitchOutputError(
            f"{platform} '{command}': output not understood: {excerpt(str(exc))}"
        ) from exc
    return [dict(row) for row in rows]


def number(value: object) -> int | None:
    """An integer column, or None where it is empty."""
    text = str(value or "").strip()
    return int(text) if text.isdecimal() else None


_BANDWIDTH = re.compile(r"(?P<value>\d+)\s*(?P<unit>[KMG])bit", re.IGNORECASE)


def bandwidth_gbps(value: object) -> float | None:
    """`400000000 Kbit` (the BW of `show interface`) in Gb/s."""
    match = _BANDWIDTH.fullmatch(str(value or "").strip())
    if match is None:
        return None
    scale = {"K": 1e-6, "M": 1e-3, "G": 1.0}[match.group("unit").upper()]
    return float(match.group("value")) * scale
