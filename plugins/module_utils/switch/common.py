# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What the platform parsers share: ntc-templates' TextFSM tables, numbers read from them, and the
view built from a platform's ports, LLDP table and running configuration."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import excerpt
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.config_text import interface_sections
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import (
    Block,
    Neighbor,
    Port,
    RoceSettings,
    SwitchOutputError,
    SwitchView,
    canonical_port,
)

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


def assemble(
    name: str,
    platform: str,
    ports: Mapping[str, Port],
    *,
    lldp: str,
    running: str,
    roce: Callable[[tuple[Block, ...]], RoceSettings],
) -> SwitchView:
    """The switch's view: its ports, the neighbours of `show lldp neighbors` (the same columns on
    every platform's template), and each interface's settings with the RoCE ones `roce` reads.

    Raises:
        SwitchOutputError: the LLDP table does not match its template.
    """
    neighbors = tuple(
        Neighbor(canonical_port(row["local_interface"]), row["neighbor_name"], row["neighbor_interface"])
        for row in table(platform, "show lldp neighbors", lldp)
    )
    sections = interface_sections(running)
    return SwitchView(
        name=name,
        platform=platform,
        ports=dict(ports),
        neighbors=neighbors,
        port_config=sections,
        roce={port: roce(blocks) for port, blocks in sections.items()},
    )
