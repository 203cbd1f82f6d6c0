# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Top-of-rack switches: what netmiko reads from them, parsed per platform, and the cabling plan.

Pure functions only; the switch_facts and switch_config modules are the thin runners.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.checks import (
    check_fabric,
    check_host_lldp,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.config_text import (
    interface_sections,
    section_text,
    setting_key,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.configure import (
    PortChange,
    all_commands,
    port_changes,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.fabric import (
    PLAN_KEYS,
    FabricPlan,
    plan_from_vars,
    port_intents,
    read_switch,
    read_switches,
    target_from_vars,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.host_lldp import parse_neighbors
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.intent import PortIntent
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import (
    Block,
    SwitchOutputError,
    SwitchView,
    canonical_port,
    view_from_dict,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.plan import PlanError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.platforms import (
    Platform,
    UnknownPlatformError,
    platform_for,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.session import (
    CONNECTION_ARGS,
    Connect,
    SwitchReadError,
    Target,
    netmiko_connect,
    run_commands,
    send_config,
    target_from_params,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.topology import Placement, placement

__all__ = [
    "CONNECTION_ARGS",
    "PLAN_KEYS",
    "Block",
    "Connect",
    "FabricPlan",
    "Placement",
    "PlanError",
    "Platform",
    "PortChange",
    "PortIntent",
    "SwitchOutputError",
    "SwitchReadError",
    "SwitchView",
    "Target",
    "UnknownPlatformError",
    "all_commands",
    "canonical_port",
    "check_fabric",
    "check_host_lldp",
    "interface_sections",
    "netmiko_connect",
    "parse_neighbors",
    "placement",
    "plan_from_vars",
    "platform_for",
    "port_changes",
    "port_intents",
    "read_switch",
    "read_switches",
    "run_commands",
    "section_text",
    "send_config",
    "setting_key",
    "target_from_params",
    "target_from_vars",
    "view_from_dict",
]
