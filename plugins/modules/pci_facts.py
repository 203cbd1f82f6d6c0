#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: pci_facts
short_description: PCI devices and their link speed and width, current versus capability
description:
  - Parses C(lspci -vvv) for each device's description, C(LnkCap) and C(LnkSta), and reads
    C(/sys/bus/pci/devices) for vendor, device and class ids and the NUMA node.
  - Falls back to sysfs alone when lspci is not installed.
  - C(downgraded) lists the bus ids whose link runs below its capability.
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
- name: Read PCI facts
  gpurack.bootstrap.pci_facts:

- name: Read PCI facts from a capture bundle
  gpurack.bootstrap.pci_facts:
    root: /var/tmp/captures/gpu01

- name: Fail on downgraded PCIe links
  ansible.builtin.assert:
    that: ansible_facts['gpurack_pci']['downgraded'] | length == 0
    fail_msg: "Downgraded links: {{ ansible_facts['gpurack_pci']['downgraded'] }}"
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to ansible_facts.
  returned: always
  type: dict
  contains:
    gpurack_pci:
      description: PCI devices; see docs/facts.md.
      returned: always
      type: dict
      sample:
        available: true
        source: lspci-vvv
        sources: [lspci -vvv, sys/bus/pci/devices]
        devices:
          - bus_id: "0000:19:00.0"
            description: "3D controller: NVIDIA Corporation Device 2330 (rev a1)"
            vendor_id: "0x10de"
            device_id: "0x2330"
            class_id: "0x0302"
            numa_node: 0
            link: {cap_speed_gts: 32.0, cap_width: 16, sta_speed_gts: 32.0, sta_width: 16,
                   speed_downgraded: false, width_downgraded: false}
        downgraded: []
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    CaptureError,
    gather_pci,
    make_runner,
    open_source,
    warn_about,
)


def main() -> None:
    module = AnsibleModule(argument_spec={"root": {"type": "path", "default": "/"}}, supports_check_mode=True)
    source = open_source(module.params["root"], make_runner(module))
    try:
        facts = gather_pci(source)
    except (FactsError, CaptureError) as exc:
        module.fail_json(msg=f"Could not read PCI facts from {source.description}: {exc}")
    warn_about(module, source)
    module.exit_json(changed=False, ansible_facts={"gpurack_pci": facts})


if __name__ == "__main__":
    main()
