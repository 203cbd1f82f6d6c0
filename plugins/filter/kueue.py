# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Kueue filters: kueue_manager_objects, kueue_manifest_digest (docs: sidecar .yml files)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.kueue_install import (
    KueueManifestError,
    manager_objects,
    manifest_digest,
)


def _plain(wait_for_pods_ready: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Plain JSON values: templated inventory arrives as Ansible's tagged strings and mappings,
    which PyYAML's safe dumper refuses to write."""
    if wait_for_pods_ready is not None and not isinstance(wait_for_pods_ready, Mapping):
        raise AnsibleFilterError(
            "kueue_wait_for_pods_ready must be a mapping (Kueue's waitForPodsReady),"
            f" got {wait_for_pods_ready!r}"
        )
    return json.loads(json.dumps(dict(wait_for_pods_ready))) if wait_for_pods_ready else None


def _read(path: str) -> str:
    try:
        with open(str(path), encoding="utf-8") as manifest:
            return manifest.read()
    except OSError as exc:
        raise AnsibleFilterError(f"kueue_manifest {path}: {exc.strerror or exc}") from None


def kueue_manager_objects(
    path: str, wait_for_pods_ready: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The objects of Kueue's install manifest at `path` (on the controller), its manager
    configured with `wait_for_pods_ready`, its pod template stamped with the configuration's
    digest and the Deployment with `kueue_manifest_digest`'s."""
    plain = _plain(wait_for_pods_ready)
    try:
        return manager_objects(_read(path), plain)
    except KueueManifestError as exc:
        raise AnsibleFilterError(f"kueue_manifest {path}: {exc}") from None


def kueue_manifest_digest(path: str, wait_for_pods_ready: Mapping[str, Any] | None = None) -> str:
    """The digest that `kueue_manager_objects` of the same arguments puts on the manager's
    Deployment (annotation gpurack.io/kueue-manifest), without parsing the manifest."""
    return manifest_digest(_read(path), _plain(wait_for_pods_ready))


class FilterModule:
    """gpurack.bootstrap Kueue filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "kueue_manager_objects": kueue_manager_objects,
            "kueue_manifest_digest": kueue_manifest_digest,
        }
