#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: nic_facts
short_description: Network interfaces and RDMA (InfiniBand / RoCE) ports
description:
  - Reads C(/sys/class/net) (without C(lo)) and C(/sys/class/infiniband) (firmware, board,
    port state, rate, link layer and counters).
  - Runs C(ibstat) as a second source for node and port GUIDs, and for the ports when sysfs
    has no infiniband tree. sysfs wins where both give a value.
  - Missing tools are reported as facts (C(available=false) or a sysfs fallback), never as errors.
  - With O(root) pointing at a capture bundle (see C(docs/capture-format.md)) the commands are
    replayed from the bundle and sysfs is read below it.
version_added: "0.1.0"
author: gpurack maintainers (@gpurack)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
  - gpurack.bootstrap.facts
notes:
  - The schema is in C(docs/facts.md) of the collection.
"""

EXAMPLES = r"""
- name: Read NIC facts
  gpurack.bootstrap.nic_facts:

- name: Read NIC facts from a capture bundle
  gpurack.bootstrap.nic_facts:
    root: /var/tmp/captures/gpu01

- name: Expect eight active 400 Gb/s InfiniBand ports
  ansible.builtin.assert:
    that: >-
      ansible_facts['gpurack_nic']['rdma']
      | selectattr('state', 'eq', 'ACTIVE') | selectattr('rate_gbps', 'eq', 400)
      | selectattr('link_layer', 'eq', 'InfiniBand') | list | length == 8
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to ansible_facts.
  returned: always
  type: dict
  contains:
    gpurack_nic:
      description: Network interfaces and RDMA ports; see docs/facts.md.
      returned: always
      type: dict
      sample:
        available: true
        sources: [sys/class/net, sys/class/infiniband, ibstat]
        net: [{name: eth0, address: "02:fc:00:00:00:01", mtu: 1500, operstate: up, speed_mbps: null}]
        rdma:
          - {device: mlx5_0, port: 1, state: ACTIVE, phys_state: LinkUp, rate_gbps: 400,
             link_layer: InfiniBand, fw_ver: 28.41.1000, board_id: MT_0000000838, hca_type: MT4129,
             node_guid: "0x58a2e10300a7820e", port_guid: "0x58a2e10300a7820e", numa_node: 0,
             counters: {link_downed: 0, symbol_error: 0}}
        ibstat_available: true
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    CaptureError,
    gather_nic,
    make_runner,
    open_source,
    warn_about,
)


def main() -> None:
    module = AnsibleModule(argument_spec={"root": {"type": "path", "default": "/"}}, supports_check_mode=True)
    source = open_source(module.params["root"], make_runner(module))
    try:
        facts = gather_nic(source)
    except (FactsError, CaptureError) as exc:
        module.fail_json(msg=f"Could not read NIC facts from {source.description}: {exc}")
    warn_about(module, source)
    module.exit_json(changed=False, ansible_facts={"gpurack_nic": facts})


if __name__ == "__main__":
    main()
