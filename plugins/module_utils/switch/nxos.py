# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Cisco NX-OS: the commands gpurack reads, their parsing, and a port's intended settings.

NX-OS keeps a RoCE fabric's lossless class (`pause pfc-cos N`) and ECN thresholds in QoS
policies that the site defines once per switch; per port, gpurack turns PFC on and attaches
those policies by name (PortIntent's roce policies), so `pfc_priorities` stays empty here.
"""

from __future__ import annotations

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

NAME = "cisco_nxos"
LLDP = "show lldp neighbors"
INTERFACES = "show interface"
RUNNING = "show running-config"
COMMANDS = (LLDP, INTERFACES, RUNNING)


def _roce(blocks: tuple[Block, ...]) -> RoceSettings:
    heads = [head for head, _body in blocks]
    return RoceSettings(
        pfc="priority-flow-control mode on" in heads,
        ecn=any(head.startswith("service-policy type queuing output ") for head in heads),
    )


def parse(name: str, outputs: Mapping[str, str]) -> SwitchView:
    """The switch's view from the outputs of COMMANDS.

    Raises:
        SwitchOutputError: an output does not match its template.
    """
    ports = {}
    for row in table(NAME, INTERFACES, outputs[INTERFACES]):
        port = canonical_port(row["interface"])
        ports[port] = Port(
            name=port,
            oper_up=row["link_status"] == "up",
            admin_up=row["admin_state"] == "up",
            speed_gbps=bandwidth_gbps(row["bandwidth"]),
            mtu=number(row["mtu"]),
            input_errors=number(row["input_errors"]),
            output_errors=number(row["output_errors"]),
            description=str(row["description"]),
        )
    return assemble(name, NAME, ports, lldp=outputs[LLDP], running=outputs[RUNNING], roce=_roce)


def intended(intent: PortIntent) -> tuple[Block, ...]:
    """The port's settings in NX-OS's configuration language (speed in Mb/s)."""
    blocks: list[Block] = [(f"description {intent.description}", ())]
    if intent.mtu is not None:
        blocks.append((f"mtu {intent.mtu}", ()))
    if intent.speed_gbps is not None:
        blocks.append((f"speed {intent.speed_gbps * 1000}", ()))
    if intent.pfc_priority is not None:
        blocks.append(("priority-flow-control mode on", ()))
        blocks.append((f"service-policy type qos input {intent.qos_policy}", ()))
        if intent.ecn:
            blocks.append((f"service-policy type queuing output {intent.queuing_policy}", ()))
    return tuple(blocks)
