# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Converge stamps: what a role made on a host, recorded when it ends, so that a re-run whose
inputs and live state are unchanged can skip the role's tasks and still say changed=0 truthfully
(docs/performance.md, "The re-run"). Stdlib only.

- `state`: reads what a host holds right now (files, mounts, packages, services);
- `stamp`: the record, its digest, and the reasons it no longer holds.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.converge.stamp import (
    Stamp,
    differences,
    digest,
    load,
    save,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.converge.state import (
    Probe,
    fstab_states,
    mount_states,
    package_states,
    path_state,
    service_states,
)

__all__ = [
    "Probe",
    "Stamp",
    "differences",
    "digest",
    "fstab_states",
    "load",
    "mount_states",
    "package_states",
    "path_state",
    "save",
    "service_states",
]
