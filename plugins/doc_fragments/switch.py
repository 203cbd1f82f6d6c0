# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The options every gpurack switch module shares: where the switch answers SSH, as whom, its
platform and the timeout (their argument spec is module_utils/switch/session.py's)."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  name:
    description: The switch's inventory name (the name LLDP and the cabling plan use).
    type: str
    required: true
  host:
    description: Address of the switch's SSH server.
    type: str
    required: true
  port:
    description: Its SSH port.
    type: int
    default: 22
  username:
    description: The user to log in as.
    type: str
    required: true
  password:
    description: The user's password. Never logged.
    type: str
    required: true
  network_os:
    description: The platform, as C(ansible_network_os) spells it (C(arista_eos) or C(arista.eos.eos),
      C(cisco_nxos) or C(cisco.nxos.nxos)).
    type: str
    required: true
  timeout:
    description: Seconds allowed for the TCP connect, the login and each command (1 to 600).
    type: int
    default: 30
requirements: [netmiko, ntc-templates (with netmiko)]
notes:
  - Run it on the controller (delegated to C(localhost)), one task per switch; Ansible's forks
    reach the switches at once.
  - A failure is one line, and RV(kind) says which of C(credentials), C(unreachable),
    C(timeout), C(platform) (unknown, or netmiko missing) or C(output) (an output no template
    understands).
"""
