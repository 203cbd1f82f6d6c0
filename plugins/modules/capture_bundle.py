#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: capture_bundle
short_description: Write a capture bundle of the node into a tar.gz on the node
description:
  - Runs the commands of the capture list (C(plugins/module_utils/facts/capture.py)), copies its
    plain files (C(os-release)) and mirrors the sysfs attributes the facts modules read, into a
    gzip'd tar in the bundle format of C(docs/capture-format.md). It is the code
    C(gpurack capture) runs (C(plugins/module_utils/facts/bundle.py)); a tool that is not installed
    gives its C(rc=127) frame.
  - Without O(dest), or in check mode, it only probes; the commands run and nothing is written.
  - Reads the node only; writes only O(dest).
version_added: "0.2.0"
author: gpurack maintainers (@gpurack)
options:
  dest:
    description: Archive to write (overwritten). Omitted, the module only probes.
    type: path
  sysfs:
    description: Also mirror the sysfs attributes (C(sys/) in the bundle).
    type: bool
    default: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: In check mode the commands run and nothing is written.
  diff_mode:
    support: none
    details: The archive is a transport file, not state worth a diff.
  platform:
    platforms: posix
"""

EXAMPLES = r"""
- name: Write the bundle into a temporary archive
  gpurack.bootstrap.capture_bundle:
    dest: /tmp/gpurack-capture.tar.gz

- name: Only probe (run the commands, write nothing)
  gpurack.bootstrap.capture_bundle:
    sysfs: false
"""

RETURN = r"""
commands:
  description: What each command returned, in the order of the capture list.
  returned: always
  type: list
  elements: dict
  sample: [{file: nvidia-smi-L.txt, command: nvidia-smi -L, rc: 127, seconds: 0.001}]
files:
  description: Plain files found and added.
  returned: always
  type: list
  elements: str
  sample: [os-release]
sysfs:
  description: Matched sysfs entries and attribute files mirrored.
  returned: always
  type: dict
  sample: {entries: 32, files: 885}
"""

import tarfile
from pathlib import Path, PurePosixPath

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    BundleStats,
    TarSink,
    command_line,
    make_runner,
    write_bundle,
)

_ROOT = Path("/")


def _discard(_rel: PurePosixPath, _data: bytes) -> None:
    """The sink of a probe: nothing is kept."""


def _result(stats: BundleStats, changed: bool) -> dict[str, object]:
    commands = [
        {
            "file": d.command.filename,
            "command": command_line(d.command),
            "rc": d.output.rc,
            "seconds": d.seconds,
        }
        for d in stats.commands
    ]
    sysfs = {"entries": stats.sysfs.entries, "files": stats.sysfs.files}
    return {"changed": changed, "commands": commands, "files": list(stats.files), "sysfs": sysfs}


def main() -> None:
    module = AnsibleModule(
        argument_spec={"dest": {"type": "path"}, "sysfs": {"type": "bool", "default": True}},
        supports_check_mode=True,
    )
    dest, sysfs = module.params["dest"], module.params["sysfs"]
    runner = make_runner(module)
    if dest is None or module.check_mode:
        module.exit_json(**_result(write_bundle(_ROOT, runner, _discard, sysfs=sysfs), dest is not None))
    try:
        with tarfile.open(dest, "w:gz") as tar:
            sink = TarSink(tar)
            if sysfs:
                sink.folder(PurePosixPath("sys"))  # an empty mirror still unpacks to sys/
            stats = write_bundle(_ROOT, runner, sink, sysfs=sysfs)
    except OSError as exc:
        module.fail_json(msg=f"Could not write the capture archive {dest}: {exc}")
    module.exit_json(**_result(stats, True))


if __name__ == "__main__":
    main()
