#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: gpu_facts
short_description: Read NVIDIA GPU facts from nvidia-smi, or from the PCI bus when no driver is loaded
description:
  - Returns C(ansible_facts.gpurack_gpu) as described in C(docs/facts.md) of the collection.
  - Reads C(nvidia-smi -q -x) (falling back to the C(nvidia-smi -q) text), C(nvidia-smi topo -m)
    and C(nvidia-smi nvlink -s).
  - Without a working C(nvidia-smi) it scans C(/sys/bus/pci/devices) for NVIDIA GPUs and reports
    C(source=pci-scan) and C(driver_loaded=false).
  - A missing tool is a fact (C(available=false) with a C(reason)), not a failure. The module fails
    only when a tool prints malformed or truncated output.
  - Never changes the host.
version_added: 0.1.0
author:
  - gpurack maintainers (@gpurack)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
  - gpurack.bootstrap.facts
notes:
  - Works the same in check mode, because it only reads.
"""

EXAMPLES = r"""
- name: Read GPU facts
  gpurack.bootstrap.gpu_facts:

- name: Fail when the node does not have eight GPUs
  ansible.builtin.assert:
    that: ansible_facts['gpurack_gpu']['count'] == 8

- name: Read GPU facts from a capture bundle on the controller
  gpurack.bootstrap.gpu_facts:
    root: /srv/captures/gpu01
  delegate_to: localhost
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to C(ansible_facts).
  returned: always
  type: dict
  contains:
    gpurack_gpu:
      description: GPU facts; the full schema is in C(docs/facts.md).
      returned: always
      type: dict
      contains:
        available:
          description: Whether any GPU was found (by nvidia-smi or on the PCI bus).
          type: bool
          returned: always
        reason:
          description: Why C(nvidia-smi) could not be used, when C(source) is C(pci-scan) or C(none).
          type: str
          returned: when source is pci-scan or none
        source:
          description: Where the GPU list came from.
          type: str
          returned: always
          choices: [nvidia-smi-xml, nvidia-smi-text, pci-scan, none]
        driver_loaded:
          description: Whether C(nvidia-smi) could talk to a driver.
          type: bool
          returned: always
        sources:
          description: Commands and sysfs paths the facts came from.
          type: list
          elements: str
          returned: always
        driver_version:
          description: NVIDIA driver version; null without a driver.
          type: str
          returned: always
          sample: 580.159.04
        cuda_version:
          description: CUDA version the driver supports; null without a driver.
          type: str
          returned: always
          sample: "13.0"
        count:
          description: Number of GPUs.
          type: int
          returned: always
          sample: 8
        nvidia_smi_count:
          description:
            - Number of GPUs C(nvidia-smi) lists, also when the GPUs come from a PCI scan (C(0) there
              means nvidia-smi answered but listed none); null when nvidia-smi is missing or failed.
          type: int
          returned: always
          sample: 8
        gpus:
          description: One entry per GPU, in nvidia-smi index order (bus order for a PCI scan).
          type: list
          elements: dict
          returned: always
        topology:
          description: The C(nvidia-smi topo -m) matrix (gpus, links, nics, nic_names); null when unavailable.
          type: dict
          returned: always
        nvswitch:
          description: Whether the GPUs sit on an NVSwitch fabric; null when unknown.
          type: bool
          returned: always
"""


from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    CaptureError,
    gather_gpu,
    make_runner,
    open_source,
    warn_about,
)


def main() -> None:
    module = AnsibleModule(
        argument_spec={"root": {"type": "path", "default": "/"}},
        supports_check_mode=True,
    )
    source = open_source(module.params["root"], make_runner(module))
    try:
        facts = gather_gpu(source)
    except (FactsError, CaptureError) as exc:
        # The gatherer's messages already name the source.
        module.fail_json(msg=f"Could not read GPU facts: {exc}")
    warn_about(module, source)
    module.exit_json(changed=False, ansible_facts={"gpurack_gpu": facts})


if __name__ == "__main__":
    main()
