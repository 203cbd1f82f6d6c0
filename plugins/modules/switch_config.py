#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: switch_config
short_description: Set the intended configuration of a switch's cabled ports over SSH with netmiko
description:
  - Reads the switch's running configuration and compares each cabled port's section with the
    settings gpurack intends for it (description, MTU, speed, and PFC and ECN for a RoCE pool),
    rendered in the switch's own configuration language (Arista EOS, Cisco NX-OS).
  - Only the ports whose running configuration lacks an intended setting change, through
    netmiko's config mode, and the running configuration is then saved to the startup
    configuration. A second run changes nothing.
  - The port's other settings stay as they are.
  - After the change the running configuration is read again; a setting the switch did not
    take fails the task.
version_added: "0.1.0"
author: gpurack maintainers (@gpurack)
extends_documentation_fragment:
  - gpurack.bootstrap.switch
options:
  ports:
    description: The intended settings of each cabled port (the C(switch_port_intents) filter
      builds them from the cabling plan).
    type: list
    elements: dict
    required: true
    suboptions:
      port:
        description: The port, as the running configuration names it (C(Ethernet1/3)).
        type: str
        required: true
      description:
        description: The port description (the far end, C(gpu01 mlx5_3)).
        type: str
        required: true
      mtu:
        description: The MTU; unset leaves it.
        type: int
      speed_gbps:
        description: The speed in Gb/s; unset leaves it.
        type: int
      pfc_priority:
        description: The lossless priority of a RoCE pool; unset leaves PFC as it is.
        type: int
      ecn:
        description: ECN marking on the lossless queue.
        type: bool
        default: false
attributes:
  check_mode:
    support: full
    description: Reports what would change, with the diff, and changes nothing.
  diff_mode:
    support: full
    description: One diff per changed port, its running section before and after.
"""

EXAMPLES = r"""
- name: Configure the cabled ports
  gpurack.bootstrap.switch_config:
    name: "{{ inventory_hostname }}"
    host: "{{ ansible_host }}"
    port: "{{ ansible_port | default(22) }}"
    username: "{{ ansible_user }}"
    password: "{{ ansible_password }}"
    network_os: "{{ ansible_network_os }}"
    ports: "{{ hostvars | gpurack.bootstrap.switch_port_intents(groups['gpu_nodes'], inventory_hostname) }}"
  delegate_to: localhost
"""

RETURN = r"""
changed_ports:
  description: The ports whose configuration changed (or would, in check mode).
  returned: success
  type: list
  elements: str
  sample: [Ethernet1/3]
commands:
  description: The config-mode commands sent (or that would be, in check mode).
  returned: success
  type: list
  elements: str
  sample: [interface Ethernet1/3, mtu 9214]
kind:
  description: On failure, which way it failed (see switch_facts).
  returned: failure
  type: str
  sample: unreachable
"""

from typing import Any

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch import (
    CONNECTION_ARGS,
    Platform,
    PortChange,
    PortIntent,
    SwitchReadError,
    Target,
    UnknownPlatformError,
    all_commands,
    interface_sections,
    netmiko_connect,
    platform_for,
    port_changes,
    run_commands,
    send_config,
    target_from_params,
)

RUNNING = "show running-config"
PORT_OPTIONS: dict[str, dict[str, Any]] = {
    "port": {"type": "str", "required": True},
    "description": {"type": "str", "required": True},
    "mtu": {"type": "int"},
    "speed_gbps": {"type": "int"},
    "pfc_priority": {"type": "int"},
    "ecn": {"type": "bool", "default": False},
}


def _changes(target: Target, platform: Platform, intents: list[PortIntent]) -> list[PortChange]:
    running = run_commands(target, platform.name, (RUNNING,), netmiko_connect)[RUNNING]
    return port_changes(platform, interface_sections(running), intents)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            **CONNECTION_ARGS,
            "ports": {"type": "list", "elements": "dict", "required": True, "options": PORT_OPTIONS},
        },
        supports_check_mode=True,
    )
    name = module.params["name"]
    intents = [PortIntent(**entry) for entry in module.params["ports"]]
    try:
        target = target_from_params(module.params)
        platform = platform_for(module.params["network_os"])
        changes = _changes(target, platform, intents)
        if changes and not module.check_mode:
            send_config(target, platform.name, all_commands(changes), netmiko_connect)
            left = _changes(target, platform, intents)
            if left:
                module.fail_json(
                    msg=f"{name}: the switch did not take the settings of {', '.join(c.port for c in left)}",
                    kind="output",
                    commands=all_commands(left),
                )
    except UnknownPlatformError as exc:
        module.fail_json(msg=f"{name}: {exc}", kind="platform")
    except SwitchReadError as exc:
        module.fail_json(msg=str(exc), kind=exc.kind)
    module.exit_json(
        changed=bool(changes),
        changed_ports=[c.port for c in changes],
        commands=all_commands(changes),
        diff=[
            {
                "before_header": f"{name} {c.port}",
                "after_header": f"{name} {c.port}",
                "before": c.before,
                "after": c.after,
            }
            for c in changes
        ],
    )


if __name__ == "__main__":
    main()
