# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Kueue's install manifest with gpurack's manager configuration: all-or-nothing admission
(`waitForPodsReady`) set in the manager's Configuration, and the Deployment's pod template
stamped with the configuration's digest, so that a changed configuration restarts the manager
(it reads its file only at start) and an unchanged one changes nothing.

The Deployment itself (not its pod template) carries the digest of what was applied: the
manifest's text, the configuration asked for and the version of this transformation
(`manifest_digest`). The kueue role reads it back, and a converged re-run whose manager says it
holds this digest and is Available skips the apply of the manifest's objects and the waits.

waitForPodsReady: an admitted workload whose pods are not all Ready within `timeout` is evicted
and requeued, with a growing backoff (`requeuingStrategy`), and so releases the quota it held: a
distributed job that cannot start whole does not keep GPUs that its peers wait for
(docs/platform.md, "Topology and all-or-nothing admission"). The values are the kueue role's
`kueue_wait_for_pods_ready`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

CONFIG_MAP = "kueue-manager-config"
CONFIG_KEY = "controller_manager_config.yaml"
DEPLOYMENT = "kueue-controller-manager"
DIGEST_ANNOTATION = "gpurack.io/kueue-config"
MANIFEST_ANNOTATION = "gpurack.io/kueue-manifest"
# Bump when manager_objects changes what it makes of the same manifest and configuration.
TRANSFORM_VERSION = "1"


class KueueManifestError(ValueError):
    """The manifest is not Kueue's install manifest; the message says what is missing."""


def _yaml() -> Any:
    """PyYAML: the controller's (Ansible's own dependency), imported here because module_utils
    ships to nodes, which may lack it.

    Raises:
        KueueManifestError: this Python has no PyYAML.
    """
    try:
        import yaml  # noqa: PLC0415
    except ImportError as exc:
        raise KueueManifestError(f"reading the Kueue manifest needs PyYAML: {exc}") from None
    return yaml


def _named(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    for item in objects:
        if item.get("kind") == kind and (item.get("metadata") or {}).get("name") == name:
            return item
    raise KueueManifestError(f"the Kueue manifest has no {kind} {name} (is it Kueue's install manifest?)")


def manifest_digest(manifest: str, wait_for_pods_ready: Mapping[str, Any] | None) -> str:
    """The digest of what `manager_objects` makes of this manifest and configuration: cheap (no
    parsing), and it changes with the manifest's text, the configuration or this code's version."""
    digest = hashlib.sha256(f"{TRANSFORM_VERSION}\n".encode())
    digest.update(json.dumps(dict(wait_for_pods_ready or {}), sort_keys=True).encode())
    digest.update(b"\n")
    digest.update(manifest.encode())
    return digest.hexdigest()[:16]


def manager_objects(manifest: str, wait_for_pods_ready: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The manifest's objects, the manager configured: `wait_for_pods_ready` (None or {} leaves
    it out, i.e. off).

    Raises:
        KueueManifestError: no manager ConfigMap or Deployment, or a configuration that is not YAML.
    """
    yaml = _yaml()
    # libyaml's loader where PyYAML has it: the release manifest is about 1.7 MB (0.2 s, not 2 s).
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        objects = [o for o in yaml.load_all(manifest, Loader=loader) if isinstance(o, dict)]
    except yaml.YAMLError as exc:
        raise KueueManifestError(f"the Kueue manifest is not YAML: {exc}") from None
    config_map = _named(objects, "ConfigMap", CONFIG_MAP)
    deployment = _named(objects, "Deployment", DEPLOYMENT)
    try:
        config = yaml.safe_load((config_map.get("data") or {}).get(CONFIG_KEY) or "")
    except yaml.YAMLError as exc:
        raise KueueManifestError(f"{CONFIG_MAP}: {CONFIG_KEY} is not YAML: {exc}") from None
    if not isinstance(config, dict):
        raise KueueManifestError(f"{CONFIG_MAP} has no {CONFIG_KEY} Configuration")
    config.pop("waitForPodsReady", None)
    if wait_for_pods_ready:
        config["waitForPodsReady"] = dict(wait_for_pods_ready)
    text = yaml.safe_dump(config, sort_keys=False)
    config_map["data"] = {**config_map["data"], CONFIG_KEY: text}
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]
    template = deployment.setdefault("spec", {}).setdefault("template", {})
    annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
    annotations[DIGEST_ANNOTATION] = digest
    applied = deployment.setdefault("metadata", {}).setdefault("annotations", {})
    applied[MANIFEST_ANNOTATION] = manifest_digest(manifest, wait_for_pods_ready)
    return objects
