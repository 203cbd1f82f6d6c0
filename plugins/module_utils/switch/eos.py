# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Arista EOS: the commands gpurack reads, their parsing, and a port's intended settings."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.common import (
    assemble,
    bandwidth_gbps,
    number,
    table,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.intent import PortIntent
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import (
    Block,
    Port,
    RoceSettings,
    SwitchView,
    canonical_port,
)

NAME = "arista_eos"
LLDP = "show lldp neighbors"
INTERFACES = "show interfaces"
RUNNING = "show running-config"
COMMANDS = (LLDP, INTERFACES, RUNNING)
# ECN marking thresholds of the lossless queue: EOS's own example values for 100-400G RoCE.
ECN_THRESHOLDS = "minimum-threshold 150 kbytes maximum-threshold 1500 kbytes"

_BLOCK_START = re.compile(r"^(?P<port>\S+) is ", re.MULTILINE)
_ERRORS = re.compile(r"^\s+(?P<count>\d+) (?P<way>input|output) errors\b", re.MULTILINE)


def _errors(text: str) -> dict[str, dict[str, int]]:
    """Input and output error counters per interface of `show interfaces` (ntc-templates reads no
    counters for EOS)."""
    found: dict[str, dict[str, int]] = {}
    starts = list(_BLOCK_START.finditer(text))
    for i, start in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        counts = {m.group("way"): int(m.group("count")) for m in _ERRORS.finditer(text, start.end(), end)}
        found[canonical_port(start.group("port"))] = counts
    return found


def _roce(blocks: tuple[Block, ...]) -> RoceSettings:
    heads = [head for head, _body in blocks]
    priorities = tuple(
        int(words[2])
        for words in (head.split() for head in heads)
        if words[:2] == ["priority-flow-control", "priority"]
        and len(words) > 3
        and words[2].isdecimal()
        and words[3] == "no-drop"
    )
    ecn = any(
        head.startswith("tx-queue ") and any(line.startswith("random-detect ecn") for line in nested)
        for head, nested in blocks
    )
    return RoceSettings(pfc="priority-flow-control on" in heads, pfc_priorities=priorities, ecn=ecn)


def parse(name: str, outputs: Mapping[str, str]) -> SwitchView:
    """The switch's view from the outputs of COMMANDS.

    Raises:
        SwitchOutputError: an output does not match its template.
    """
    errors = _errors(outputs[INTERFACES])
    ports = {}
    for row in table(NAME, INTERFACES, outputs[INTERFACES]):
        port = canonical_port(row["interface"])
        counts = errors.get(port, {})
        ports[port] = Port(
            name=port,
            oper_up=str(row["protocol_status"]).startswith("up"),
            admin_up=row["link_status"] != "administratively down",
            speed_gbps=bandwidth_gbps(row["bandwidth"]),
            mtu=number(row["mtu"]),
            input_errors=counts.get("input"),
            output_errors=counts.get("output"),
            description=str(row["description"]),
        )
    return assemble(name, NAME, ports, lldp=outputs[LLDP], running=outputs[RUNNING], roce=_roce)


def intended(intent: PortIntent) -> tuple[Block, ...]:
    """The port's settings in EOS's configuration language."""
    blocks: list[Block] = [(f"description {intent.description}", ())]
    if intent.mtu is not None:
        blocks.append((f"mtu {intent.mtu}", ()))
    if intent.speed_gbps is not None:
        blocks.append((f"speed forced {intent.speed_gbps}gfull", ()))
    if intent.pfc_priority is not None:
        blocks.append(("priority-flow-control on", ()))
        blocks.append((f"priority-flow-control priority {intent.pfc_priority} no-drop", ()))
        if intent.ecn:
            blocks.append((f"tx-queue {intent.pfc_priority}", (f"random-detect ecn {ECN_THRESHOLDS}",)))
    return tuple(blocks)
