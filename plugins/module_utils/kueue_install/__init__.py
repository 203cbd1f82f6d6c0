# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Kueue's install manifest, its manager configured by gpurack (waitForPodsReady) before the
kueue role applies it. PyYAML (the controller's): only the filter on the controller uses it.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.kueue_install.manifest import (
    CONFIG_KEY,
    DIGEST_ANNOTATION,
    MANIFEST_ANNOTATION,
    KueueManifestError,
    manager_objects,
    manifest_digest,
)

__all__ = [
    "CONFIG_KEY",
    "DIGEST_ANNOTATION",
    "MANIFEST_ANNOTATION",
    "KueueManifestError",
    "manager_objects",
    "manifest_digest",
]
