#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: numa_facts
short_description: NUMA nodes and the CPU summary
description:
  - Reads C(/sys/devices/system/node/node*/cpulist) and C(meminfo) for each NUMA node.
  - Runs C(lscpu -J) for the CPU model, sockets, cores per socket and threads per core.
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
- name: Read NUMA facts
  gpurack.bootstrap.numa_facts:

- name: Read NUMA facts from a capture bundle
  gpurack.bootstrap.numa_facts:
    root: /var/tmp/captures/gpu01

- name: Expect two NUMA nodes
  ansible.builtin.assert:
    that: ansible_facts['gpurack_numa']['count'] == 2
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to ansible_facts.
  returned: always
  type: dict
  contains:
    gpurack_numa:
      description: NUMA nodes and CPU summary; see docs/facts.md.
      returned: always
      type: dict
      sample:
        available: true
        sources: [sys/devices/system/node, lscpu -J]
        count: 1
        nodes: [{id: 0, cpulist: "0-15", cpus: 16, mem_total_kib: 4550128}]
        cpu: {model: "Intel(R) Xeon(R) Processor", sockets: 1, cores_per_socket: 16,
              threads_per_core: 1, cpus: 16}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    CaptureError,
    gather_numa,
    make_runner,
    open_source,
    warn_about,
)


def main() -> None:
    module = AnsibleModule(argument_spec={"root": {"type": "path", "default": "/"}}, supports_check_mode=True)
    source = open_source(module.params["root"], make_runner(module))
    try:
        facts = gather_numa(source)
    except (FactsError, CaptureError) as exc:
        module.fail_json(msg=f"Could not read NUMA facts from {source.description}: {exc}")
    warn_about(module, source)
    module.exit_json(changed=False, ansible_facts={"gpurack_numa": facts})


if __name__ == "__main__":
    main()
