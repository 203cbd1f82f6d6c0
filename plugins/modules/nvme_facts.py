#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: nvme_facts
short_description: NVMe namespaces with model, serial, firmware and size
description:
  - Parses C(nvme list -o json) (nvme-cli 1.x flat and 2.x nested layouts).
  - Falls back to C(/sys/class/block/nvme*n*) when nvme-cli is not installed.
  - Marks the disks holding C(/) or C(/boot) from C(lsblk -J -O).
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
- name: Read NVMe facts
  gpurack.bootstrap.nvme_facts:

- name: Read NVMe facts from a capture bundle
  gpurack.bootstrap.nvme_facts:
    root: /var/tmp/captures/gpu01

- name: Expect eight NVMe data disks
  ansible.builtin.assert:
    that: ansible_facts['gpurack_nvme']['disks'] | rejectattr('is_os_disk') | list | length == 8
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to ansible_facts.
  returned: always
  type: dict
  contains:
    gpurack_nvme:
      description: NVMe namespaces; see docs/facts.md.
      returned: always
      type: dict
      sample:
        available: true
        source: nvme-list
        sources: [nvme list -o json, lsblk -J -O]
        disks:
          - {name: nvme0n1, model: "SAMSUNG MZWLR3T8HCLS-00A07", serial: S6EUNA0T600123,
             firmware: MPK7525Q, size_bytes: 3840755982336, namespace: 1, is_os_disk: false}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    CaptureError,
    gather_nvme,
    make_runner,
    open_source,
    warn_about,
)


def main() -> None:
    module = AnsibleModule(argument_spec={"root": {"type": "path", "default": "/"}}, supports_check_mode=True)
    source = open_source(module.params["root"], make_runner(module))
    try:
        facts = gather_nvme(source)
    except (FactsError, CaptureError) as exc:
        module.fail_json(msg=f"Could not read NVMe facts from {source.description}: {exc}")
    warn_about(module, source)
    module.exit_json(changed=False, ansible_facts={"gpurack_nvme": facts})


if __name__ == "__main__":
    main()
