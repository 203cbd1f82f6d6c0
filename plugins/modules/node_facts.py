#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
module: node_facts
short_description: Read several gpurack fact sources of a node in one module run
description:
  - Returns C(ansible_facts.gpurack_<source>) for each source in O(sources), as the one-source modules
    (M(gpurack.bootstrap.gpu_facts), M(gpurack.bootstrap.pci_facts), M(gpurack.bootstrap.numa_facts),
    M(gpurack.bootstrap.nic_facts), M(gpurack.bootstrap.nvme_facts), M(gpurack.bootstrap.os_facts))
    return them, from the same gatherers, in one round trip to the node (the facts role uses it).
  - A source whose tool prints malformed or truncated output, or whose gatherer fails in any other
    way, is left out of the facts and named in RV(errors) with the message its own module would
    fail with. The module fails on it only with O(fail_on_error).
  - Never changes the host.
version_added: 0.4.0
author:
  - gpurack maintainers (@gpurack)
options:
  sources:
    description: The sources to read.
    type: list
    elements: str
    choices: [gpu, pci, numa, nic, nvme, os]
    default: [gpu, pci, numa, nic, nvme, os]
  fail_on_error:
    description: Fail when a source cannot be read (after reading the others).
    type: bool
    default: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
  - gpurack.bootstrap.facts
notes:
  - Works the same in check mode, because it only reads.
"""

EXAMPLES = r"""
- name: Read the GPU and NIC facts
  gpurack.bootstrap.node_facts:
    sources: [gpu, nic]

- name: Read every source of a capture bundle, recording the ones that cannot be read
  gpurack.bootstrap.node_facts:
    root: /srv/captures/gpu01
    fail_on_error: false
  register: gathered
"""

RETURN = r"""
errors:
  description: Each source that could not be read (C(gpurack_<source>)) with its C(msg).
  returned: always
  type: dict
  sample: {gpurack_nvme: {msg: "Could not read NVMe facts: nvme list: invalid JSON"}}
ansible_facts:
  description: C(gpurack_<source>) for each source read (docs/facts.md).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    GATHERERS,
    CaptureError,
    make_runner,
    open_source,
    warn_about,
)

# What each one-source module calls its source in its failure message.
_TITLES = {"gpu": "GPU", "pci": "PCI", "numa": "NUMA", "nic": "NIC", "nvme": "NVMe", "os": "OS"}


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "root": {"type": "path", "default": "/"},
            "sources": {
                "type": "list",
                "elements": "str",
                "choices": list(_TITLES),
                "default": list(_TITLES),
            },
            "fail_on_error": {"type": "bool", "default": True},
        },
        supports_check_mode=True,
    )
    source = open_source(module.params["root"], make_runner(module))
    wanted = {f"gpurack_{name}": _TITLES[name] for name in module.params["sources"]}
    facts, errors = {}, {}
    for fact, gather in GATHERERS:
        if fact not in wanted:
            continue
        try:
            facts[fact] = gather(source)
        except (FactsError, CaptureError) as exc:
            # The gatherer's messages already name the source.
            errors[fact] = {"msg": f"Could not read {wanted[fact]} facts: {exc}"}
        except Exception as exc:  # one source's bug must not cost the others
            errors[fact] = {"msg": f"Could not read {wanted[fact]} facts: {type(exc).__name__}: {exc}"}
    warn_about(module, source)
    if errors and module.params["fail_on_error"]:
        module.fail_json(msg="; ".join(error["msg"] for error in errors.values()), errors=errors)
    module.exit_json(changed=False, ansible_facts=facts, errors=errors)


if __name__ == "__main__":
    main()
