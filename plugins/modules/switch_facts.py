#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: switch_facts
short_description: Read a top-of-rack switch over SSH with netmiko
description:
  - Connects to one switch with netmiko and reads its LLDP neighbours, every interface's state,
    speed, MTU and error counters, and the running configuration (for PFC and ECN per port).
  - Each output is parsed with ntc-templates' TextFSM templates behind one interface per platform
    (Arista EOS, Cisco NX-OS), into one shape (RV(switch)).
  - Changes nothing on the switch.
  - Run it on the controller (delegated to C(localhost), or with connection C(local)), one task per
    switch; Ansible's forks read the switches at once.
  - Fails with one line that says what went wrong; RV(kind) says which of C(credentials),
    C(unreachable), C(timeout), C(platform) (unknown, or netmiko missing) or C(output) (an
    output no template understands).
version_added: "0.1.0"
author: gpurack maintainers
requirements: [netmiko, ntc-templates (with netmiko)]
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
    no_log: true
  network_os:
    description: The platform, as C(ansible_network_os) spells it (C(arista_eos) or C(arista.eos.eos),
      C(cisco_nxos) or C(cisco.nxos.nxos)).
    type: str
    required: true
  timeout:
    description: Seconds allowed for the TCP connect, the login and each command.
    type: int
    default: 30
attributes:
  check_mode:
    support: full
    description: It only reads.
  diff_mode:
    support: none
    description: Nothing is changed.
"""

EXAMPLES = r"""
- name: Read the switch
  gpurack.bootstrap.switch_facts:
    name: "{{ inventory_hostname }}"
    host: "{{ ansible_host }}"
    port: "{{ ansible_port | default(22) }}"
    username: "{{ ansible_user }}"
    password: "{{ ansible_password }}"
    network_os: "{{ ansible_network_os }}"
  delegate_to: localhost
  register: switch
"""

RETURN = r"""
switch:
  description: What the switch shows.
  returned: success
  type: dict
  sample:
    name: leaf1
    platform: arista_eos
    ports: {Ethernet1: {name: Ethernet1, oper_up: true, admin_up: true, speed_gbps: 400.0, mtu: 9214,
                        input_errors: 0, output_errors: 0, description: gpu01 mlx5_0}}
    neighbors: [{port: Ethernet1, system: gpu01, remote_port: mlx5_0}]
    roce: {Ethernet1: {pfc: true, pfc_priorities: [3], ecn: true}}
kind:
  description: On failure, which way it failed.
  returned: failure
  type: str
  sample: credentials
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import SwitchOutputError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.platforms import (
    UnknownPlatformError,
    platform_for,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.session import (
    SwitchReadError,
    Target,
    netmiko_connect,
    run_commands,
)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "name": {"type": "str", "required": True},
            "host": {"type": "str", "required": True},
            "port": {"type": "int", "default": 22},
            "username": {"type": "str", "required": True},
            "password": {"type": "str", "required": True, "no_log": True},
            "network_os": {"type": "str", "required": True},
            "timeout": {"type": "int", "default": 30},
        },
        supports_check_mode=True,
    )
    p = module.params
    if not 1 <= p["timeout"] <= 600:
        module.fail_json(
            msg=f"{p['name']}: timeout must be 1 to 600 seconds, got {p['timeout']}", kind="platform"
        )
    target = Target(p["name"], p["host"], p["port"], p["username"], p["password"], float(p["timeout"]))
    try:
        platform = platform_for(p["network_os"])
        outputs = run_commands(target, platform.name, platform.commands, netmiko_connect)
        view = platform.parse(p["name"], outputs)
    except UnknownPlatformError as exc:
        module.fail_json(msg=f"{p['name']}: {exc}", kind="platform")
    except SwitchReadError as exc:
        module.fail_json(msg=str(exc), kind=exc.kind)
    except SwitchOutputError as exc:
        module.fail_json(msg=f"{target.where()}: {exc}", kind="output")
    module.exit_json(changed=False, switch=view.to_dict())


if __name__ == "__main__":
    main()
