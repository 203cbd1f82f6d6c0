#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: os_facts
short_description: Kernel, distribution, cgroup version, Secure Boot, GPU modules and Xid events
description:
  - Reads the kernel release from C(uname -a), the distribution from C(os-release), the
    cgroup version from C(/sys/fs/cgroup), Secure Boot from C(mokutil --sb-state).
  - Reports whether C(nouveau), C(nvidia) and C(nvidia_peermem) are loaded (C(lsmod), else
    C(/sys/module)), and the NVIDIA Xid events in the kernel log.
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
- name: Read OS facts
  gpurack.bootstrap.os_facts:

- name: Read OS facts from a capture bundle
  gpurack.bootstrap.os_facts:
    root: /var/tmp/captures/gpu01

- name: Fail when nouveau is loaded
  ansible.builtin.assert:
    that: not ansible_facts['gpurack_os']['modules']['nouveau']
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to ansible_facts.
  returned: always
  type: dict
  contains:
    gpurack_os:
      description: Operating system facts; see docs/facts.md.
      returned: always
      type: dict
      sample:
        available: true
        sources: [uname -a, etc/os-release, sys/fs/cgroup, lsmod, dmesg]
        kernel: "6.18.44-fc-v657-gpu"
        distribution: {id: ubuntu, version_id: "24.04", pretty_name: "Ubuntu 24.04.3 LTS"}
        cgroup_version: 2
        secure_boot: null
        modules: {nouveau: false, nvidia: true, nvidia_peermem: false}
        xid_events:
          - {time: "Sun Feb 23 16:24:18 2025", bus_id: "0000:9b:00.0", xid: 119, pid: 2024380,
             process: nvidia-smi, message: "Timeout after 6s of waiting for RPC response from GPU4 GSP!"}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    CaptureError,
    gather_os,
    make_runner,
    open_source,
    warn_about,
)


def main() -> None:
    module = AnsibleModule(argument_spec={"root": {"type": "path", "default": "/"}}, supports_check_mode=True)
    source = open_source(module.params["root"], make_runner(module))
    try:
        facts = gather_os(source)
    except (FactsError, CaptureError) as exc:
        module.fail_json(msg=f"Could not read OS facts from {source.description}: {exc}")
    warn_about(module, source)
    module.exit_json(changed=False, ansible_facts={"gpurack_os": facts})


if __name__ == "__main__":
    main()
