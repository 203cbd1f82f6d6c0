# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Kueue filters: kueue_manager_objects (docs: sidecar .yml files)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.kueue_install import (
    KueueManifestError,
    manager_objects,
)


def kueue_manager_objects(
    path: str, wait_for_pods_ready: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The objects of Kueue's install manifest at `path` (on the controller), its manager
    configured with `wait_for_pods_ready` and its pod template stamped with the configuration's digest."""
    if wait_for_pods_ready is not None and not isinstance(wait_for_pods_ready, Mapping):
        raise AnsibleFilterError(
            "kueue_wait_for_pods_ready must be a mapping (Kueue's waitForPodsReady),"
            f" got {wait_for_pods_ready!r}"
        )
    # Plain JSON values: templated inventory arrives as Ansible's tagged strings and mappings,
    # which PyYAML's safe dumper refuses to write.
    plain = json.loads(json.dumps(dict(wait_for_pods_ready))) if wait_for_pods_ready else None
    try:
        with open(str(path), encoding="utf-8") as manifest:
            return manager_objects(manifest.read(), plain)
    except OSError as exc:
        raise AnsibleFilterError(f"kueue_manifest {path}: {exc.strerror or exc}") from None
    except KueueManifestError as exc:
        raise AnsibleFilterError(f"kueue_manifest {path}: {exc}") from None


class FilterModule:
    """gpurack.bootstrap Kueue filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"kueue_manager_objects": kueue_manager_objects}
