#!/usr/bin/python
# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: validation_textfile
short_description: Write a node's check verdicts as a node exporter textfile (gpurack.prom)
description:
  - Renders O(results) (the node_checks module's results) as Prometheus text exposition
    (C(gpurack_check_verdict), C(gpurack_check_measured), C(gpurack_node_validated),
    C(gpurack_node_validation_timestamp_seconds)) and writes it as O(directory)/C(gpurack.prom),
    where the node exporter's textfile collector reads it.
  - The file is written atomically, as the node exporter asks, by writing a temporary file in the same folder
    (named C(.gpurack.prom.*.tmp), which the collector ignores) and renaming it.
  - The file is only rewritten when a value other than the timestamp changes, so the timestamp is the
    time of the validation that produced the values and a re-run with the same results changes nothing.
  - The encoding is in C(docs/platform.md), section C(Metrics and the Node condition).
version_added: "0.1.0"
author: gpurack maintainers (@gpurack)
options:
  directory:
    description: The node exporter's textfile folder (C(--collector.textfile.directory)); made when missing.
    type: path
    required: true
  node:
    description: The Kubernetes Node name, label C(node).
    type: str
    required: true
  pool:
    description: The node's pool name, label C(pool); empty when the node has no pool.
    type: str
    default: ""
  results:
    description: Check results in the shape of the node_checks module's C(results).
    type: list
    elements: dict
    required: true
  validated:
    description:
      - Whether validation admitted the node (C(gpurack_node_validated) 1).
      - Defaults to the node verdict being pass.
    type: bool
  create:
    description:
      - Make O(directory) when it is missing.
      - With C(false), a host without the folder (no node exporter reads it) gets nothing, and
        RV(written) says so; one task instead of a C(stat) before it.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Reads the current file and reports whether it would change, without writing.
  diff_mode:
    support: full
    description: Shows the file before and after.
"""

EXAMPLES = r"""
- name: Write the verdicts for the node exporter
  gpurack.bootstrap.validation_textfile:
    directory: /var/lib/prometheus/node-exporter
    node: "{{ inventory_hostname }}"
    pool: "{{ gpurack_pool.name }}"
    results: "{{ preflight_report.results }}"
    validated: "{{ validation_result.admitted | bool }}"
  become: true
"""

RETURN = r"""
path:
  description: The file written.
  returned: always
  type: str
  sample: /var/lib/prometheus/node-exporter/gpurack.prom
series:
  description: How many samples the file holds.
  returned: success
  type: int
  sample: 42
written:
  description: Whether the file is there with these values (false only with O(create=false) and no folder).
  returned: success
  type: bool
  sample: true
"""

import os
import tempfile
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import (
    TEXTFILE_NAME,
    render_textfile,
    same_values,
)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _write_atomic(directory: str, text: str) -> None:
    """Temporary file in `directory` (not *.prom, so the collector skips it), fsync, then rename."""
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{TEXTFILE_NAME}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, os.path.join(directory, TEXTFILE_NAME))
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "directory": {"type": "path", "required": True},
            "node": {"type": "str", "required": True},
            "pool": {"type": "str", "default": ""},
            "results": {"type": "list", "elements": "dict", "required": True},
            "validated": {"type": "bool"},
            "create": {"type": "bool", "default": True},
        },
        supports_check_mode=True,
    )
    p = module.params
    directory = p["directory"]
    path = os.path.join(directory, TEXTFILE_NAME)
    if not p["create"] and not os.path.isdir(directory):
        module.exit_json(changed=False, path=path, series=0, written=False, msg=f"no folder {directory}")
    try:
        text = render_textfile(p["node"], p["pool"], p["results"], time.time(), p["validated"])
    except (TypeError, ValueError) as exc:
        module.fail_json(msg=f"Invalid results: {exc}", path=path)
    try:
        old = _read(path)
    except OSError as exc:
        module.fail_json(msg=f"Could not read {path}: {exc}", path=path)
    changed = not same_values(old, text)
    if changed and not module.check_mode:
        try:
            os.makedirs(directory, mode=0o755, exist_ok=True)
            _write_atomic(directory, text)
        except OSError as exc:
            module.fail_json(msg=f"Could not write {path}: {exc}", path=path)
    after = text if changed else (old or "")
    result = {
        "changed": changed,
        "path": path,
        "series": sum(1 for line in after.splitlines() if line and not line.startswith("#")),
        "written": True,
    }
    if module._diff and changed:
        result["diff"] = {"before_header": path, "after_header": path, "before": old or "", "after": text}
    module.exit_json(**result)


if __name__ == "__main__":
    main()
