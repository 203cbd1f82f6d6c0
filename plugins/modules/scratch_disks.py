#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: scratch_disks
short_description: Probe candidate scratch disks and plan the nvme_scratch layout
description:
  - Says of each path in O(devices) whether it is a block device, holds the OS (a disk behind
    C(/), C(/boot), C(/boot/efi), C(/usr), C(/var) or swap), is in use (partitions, holders,
    mounts, C(blkid -p) signatures) or is ours (an md member named O(md_name) or XFS labelled
    O(fs_label)). Devices are found by device number, so a disk under another name is found too.
  - Plans the layout over them (RAID0 over two or more, the one disk directly, or nothing),
    as the nvme_scratch role uses it.
  - Only reads (C(plugins/module_utils/storage/scratch.py)).
version_added: "0.2.0"
author: gpurack maintainers (@gpurack)
options:
  devices:
    description: Candidate disks (C(/dev/...)).
    type: list
    elements: str
    required: true
  md_name:
    description: Name of our md array (C(--name)).
    type: str
    required: true
  md_device:
    description: Path our array is created at (C(/dev/md/<md_name>)).
    type: str
    required: true
  fs_label:
    description: Label of our XFS.
    type: str
    required: true
  wipe:
    description: Plan to erase busy disks and use them.
    type: bool
    default: false
  os_disks:
    description: Disks known to hold the OS from other facts (C(gpurack_nvme)); never used.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: The module only reads; check mode runs it unchanged.
  diff_mode:
    support: none
    details: Nothing is changed, so there is nothing to diff.
  platform:
    platforms: linux
"""

EXAMPLES = r"""
- name: Probe the candidate disks and plan the layout
  gpurack.bootstrap.scratch_disks:
    devices: [/dev/nvme1n1, /dev/nvme2n1]
    md_name: gpurack-scratch
    md_device: /dev/md/gpurack-scratch
    fs_label: gpuscratch
  register: __nvme_scratch_probe_run
"""

RETURN = r"""
probe:
  description: C(md_available) (the kernel has md) and one entry per candidate.
  returned: always
  type: dict
  sample:
    md_available: true
    disks:
      - {path: /dev/nvme1n1, exists: true, block: true, devno: "259:1", os_disk: false, mounted: [],
         partitions: [], holders: [], md_holder: "", fstype: "", label: "", ours: false, free: true,
         probe_error: ""}
plan:
  description:
    - The layout (unusable, os, ours, busy, wipe, layout, members, create, running, target, unused).
    - C(refused) says why each unusable, OS or busy disk cannot be used.
  returned: always
  type: dict
  sample:
    {layout: raid0, members: [/dev/nvme1n1, /dev/nvme2n1], create: true, target: /dev/md/gpurack-scratch}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import make_runner
from ansible_collections.gpurack.bootstrap.plugins.module_utils.storage import (
    BlockSystem,
    PlanOptions,
    plan,
    probe,
)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "devices": {"type": "list", "elements": "str", "required": True},
            "md_name": {"type": "str", "required": True},
            "md_device": {"type": "str", "required": True},
            "fs_label": {"type": "str", "required": True},
            "wipe": {"type": "bool", "default": False},
            "os_disks": {"type": "list", "elements": "str", "default": []},
        },
        supports_check_mode=True,
    )
    params = module.params
    found = probe(
        BlockSystem(), params["devices"], make_runner(module), params["md_name"], params["fs_label"]
    )
    options = PlanOptions(
        md_device=params["md_device"], wipe=params["wipe"], facts_os=tuple(params["os_disks"])
    )
    module.exit_json(changed=False, probe=found, plan=plan(found["disks"], options))


if __name__ == "__main__":
    main()
