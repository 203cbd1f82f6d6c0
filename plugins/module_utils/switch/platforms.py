# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The switch platforms gpurack reads and configures, behind one interface, by netmiko device type.

An inventory names a switch's platform with `ansible_network_os` in either spelling:
netmiko's (`arista_eos`) or the Ansible collection's (`arista.eos.eos`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import excerpt
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch import eos, nxos
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.intent import PortIntent
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import Block, SwitchView


class UnknownPlatformError(ValueError):
    """The switch's platform is not one gpurack reads; the message lists those it does."""


@dataclass(frozen=True)
class Platform:
    """One platform: the show commands read, their parser, a port's intended settings, and
    whether its port configuration names the lossless priorities (EOS) or a policy does (NX-OS)."""

    name: str
    commands: tuple[str, ...]
    parse: Callable[[str, Mapping[str, str]], SwitchView]
    intended: Callable[[PortIntent], tuple[Block, ...]]
    per_port_priorities: bool
    save_command: str = "copy running-config startup-config"


PLATFORMS: dict[str, Platform] = {
    eos.NAME: Platform(eos.NAME, eos.COMMANDS, eos.parse, eos.intended, per_port_priorities=True),
    nxos.NAME: Platform(nxos.NAME, nxos.COMMANDS, nxos.parse, nxos.intended, per_port_priorities=False),
}
_ALIASES = {"arista.eos.eos": eos.NAME, "eos": eos.NAME, "cisco.nxos.nxos": nxos.NAME, "nxos": nxos.NAME}


def platform_for(network_os: object) -> Platform:
    """The platform an inventory's `ansible_network_os` names.

    Raises:
        UnknownPlatformError: it names none that gpurack reads.
    """
    key = str(network_os or "").strip()
    found = PLATFORMS.get(_ALIASES.get(key, key))
    if found is None:
        known = ", ".join(sorted(PLATFORMS))
        raise UnknownPlatformError(f"unknown switch platform {excerpt(network_os)}; gpurack reads {known}")
    return found
