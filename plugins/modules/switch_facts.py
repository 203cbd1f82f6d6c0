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
version_added: "0.1.0"
author: gpurack maintainers (@gpurack)
extends_documentation_fragment:
  - gpurack.bootstrap.switch
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
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch import (
    CONNECTION_ARGS,
    SwitchReadError,
    netmiko_connect,
    read_switch,
    target_from_params,
)


def main() -> None:
    module = AnsibleModule(argument_spec=CONNECTION_ARGS, supports_check_mode=True)
    try:
        target = target_from_params(module.params)
        view = read_switch(target, module.params["network_os"], netmiko_connect)
    except SwitchReadError as exc:
        module.fail_json(msg=str(exc), kind=exc.kind)
    module.exit_json(changed=False, switch=view.to_dict())


if __name__ == "__main__":
    main()
