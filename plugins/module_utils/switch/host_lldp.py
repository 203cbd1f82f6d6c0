# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""LLDP as a server sees it, where lldpd runs there: `lldpcli -f json0 show neighbors`.

json0 is lldpcli's stable JSON form: every value is a list, so one neighbour and many parse
alike (plain `-f json` turns a single entry into an object). Each interface gives its
name, the far end's system name (chassis name) and port ID.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import excerpt
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import (
    SwitchOutputError,
    canonical_port,
)

COMMAND = ("lldpcli", "-f", "json0", "show", "neighbors")


@dataclass(frozen=True)
class HostNeighbor:
    """One host interface and the switch port its LLDP neighbour advertises."""

    interface: str
    system: str
    port: str


def _first_value(entries: Any) -> str:
    """`[{"value": "leaf1"}]` as `leaf1`; empty when absent."""
    if isinstance(entries, list) and entries and isinstance(entries[0], dict):
        return str(entries[0].get("value", "")).strip()
    return ""


def parse_neighbors(text: str) -> list[HostNeighbor]:
    """The host's LLDP neighbours; an empty output (no neighbour) gives none.

    Raises:
        SwitchOutputError: the output is not lldpcli's json0 form.
    """
    if not text.strip():
        return []
    try:
        data = json.loads(text)
        interfaces = data["lldp"][0].get("interface", [])
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise SwitchOutputError(f"{' '.join(COMMAND)}: not lldpcli's json0 output: {excerpt(text)}") from None
    found = []
    for interface in interfaces if isinstance(interfaces, list) else []:
        if not isinstance(interface, dict):
            continue
        chassis = interface.get("chassis") or [{}]
        port = interface.get("port") or [{}]
        system = _first_value(chassis[0].get("name")) if isinstance(chassis[0], dict) else ""
        port_id = _first_value(port[0].get("id")) if isinstance(port[0], dict) else ""
        name = str(interface.get("name", "")).strip()
        if name and system and port_id:
            found.append(HostNeighbor(name, system, canonical_port(port_id)))
    return found
