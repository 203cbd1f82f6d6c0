"""Kueue's install manifest with gpurack's manager configuration: waitForPodsReady set in the
manager's Configuration, the rest kept, and the Deployment stamped with the configuration's digest
(a change restarts the manager; the same settings give the same objects)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.filter.kueue import (
    kueue_manager_objects,
    kueue_manifest_digest,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.kueue_install import (
    CONFIG_KEY,
    DIGEST_ANNOTATION,
    MANIFEST_ANNOTATION,
    KueueManifestError,
    manager_objects,
)

WAIT = {"timeout": "10m", "blockAdmission": False, "requeuingStrategy": {"timestamp": "Eviction"}}
CONFIG = """apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: :8081
#waitForPodsReady:
#  timeout: 5m
integrations:
  frameworks:
  - "batch/job"
"""
MANIFEST = yaml.safe_dump_all(
    [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kueue-system"}},
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
            "data": {CONFIG_KEY: CONFIG},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "kueue-controller-manager", "namespace": "kueue-system"},
            "spec": {"template": {"spec": {"containers": [{"name": "manager"}]}}},
        },
    ]
)


def _config(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (config_map,) = [o for o in objects if o["kind"] == "ConfigMap"]
    found: dict[str, Any] = yaml.safe_load(config_map["data"][CONFIG_KEY])
    return found


def _digest(objects: list[dict[str, Any]]) -> str:
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    return str(deployment["spec"]["template"]["metadata"]["annotations"][DIGEST_ANNOTATION])


def test_the_manager_gets_wait_for_pods_ready_and_keeps_the_rest_of_its_configuration() -> None:
    objects = manager_objects(MANIFEST, WAIT)
    assert [o["kind"] for o in objects] == ["Namespace", "ConfigMap", "Deployment"]
    config = _config(objects)
    assert config["waitForPodsReady"] == WAIT
    assert config["integrations"] == {"frameworks": ["batch/job"]}
    assert config["health"] == {"healthProbeBindAddress": ":8081"}


def test_the_digest_follows_the_configuration_only() -> None:
    first, again = manager_objects(MANIFEST, WAIT), manager_objects(MANIFEST, dict(WAIT))
    assert first == again  # the same settings: the same objects, so a re-run applies nothing new
    longer = manager_objects(MANIFEST, {**WAIT, "timeout": "15m"})
    assert _digest(longer) != _digest(first)  # a new configuration restarts the manager
    off = manager_objects(MANIFEST, {})
    assert "waitForPodsReady" not in _config(off) and _digest(off) not in (_digest(first), _digest(longer))


def _applied(objects: list[dict[str, Any]]) -> str:
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    return str(deployment["metadata"]["annotations"][MANIFEST_ANNOTATION])


def test_the_deployment_carries_the_digest_the_role_compares_before_applying(tmp_path: Path) -> None:
    """The kueue role skips the apply when the running manager carries kueue_manifest_digest's
    value: it must be the one manager_objects stamps, and change with the manifest or the
    configuration (else a new release or setting would never be applied)."""
    path = tmp_path / "kueue.yaml"
    path.write_text(MANIFEST)
    stamped = _applied(kueue_manager_objects(str(path), WAIT))
    assert kueue_manifest_digest(str(path), WAIT) == stamped
    assert kueue_manifest_digest(str(path), {**WAIT, "timeout": "15m"}) != stamped
    assert kueue_manifest_digest(str(path), None) != stamped
    path.write_text(MANIFEST.replace("healthProbeBindAddress: :8081", "healthProbeBindAddress: :8082"))
    assert kueue_manifest_digest(str(path), WAIT) != stamped
    # On the Deployment's metadata, not its pod template: a new manifest alone restarts nothing.
    (deployment,) = [o for o in kueue_manager_objects(str(path), WAIT) if o["kind"] == "Deployment"]
    assert MANIFEST_ANNOTATION not in deployment["spec"]["template"]["metadata"]["annotations"]


@pytest.mark.parametrize(
    ("manifest", "error"),
    [
        (MANIFEST.replace("kueue-manager-config", "other"), "no ConfigMap kueue-manager-config"),
        (MANIFEST.replace("kueue-controller-manager", "other"), "no Deployment kueue-controller-manager"),
        ("kind: [", "not YAML"),
    ],
)
def test_a_manifest_that_is_not_kueues_is_refused_with_what_is_missing(manifest: str, error: str) -> None:
    with pytest.raises(KueueManifestError, match=error):
        manager_objects(manifest, WAIT)


def test_the_filter_names_the_manifest_on_any_error(tmp_path: Path) -> None:
    path = tmp_path / "kueue.yaml"
    with pytest.raises(AnsibleFilterError, match=f"kueue_manifest {path}: No such file"):
        kueue_manager_objects(str(path), WAIT)
    path.write_text(MANIFEST.replace("kueue-manager-config", "other"))
    with pytest.raises(AnsibleFilterError, match="no ConfigMap kueue-manager-config"):
        kueue_manager_objects(str(path), WAIT)
    with pytest.raises(AnsibleFilterError, match="must be a mapping"):
        kueue_manager_objects(str(path), ["10m"])  # type: ignore[arg-type]


def test_the_release_manifest_the_lab_builds_is_configured() -> None:
    cache = Path(os.environ.get("GPURACK_K8S_CACHE", Path.home() / ".cache" / "gpurack" / "k8s"))
    path = cache / "current" / "manifests" / "kueue.yaml"
    if not path.is_file():
        pytest.skip(f"no Kueue manifest at {path}: make lab-k8s builds it")
    objects = kueue_manager_objects(str(path), WAIT)
    assert len(objects) > 50 and _config(objects)["waitForPodsReady"] == WAIT
    assert _config(objects)["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"


class _Tagged(str):
    """A str subclass, as Ansible 2.19 hands templated values to a filter (AnsibleTaggedStr)."""


def test_the_filter_takes_ansibles_tagged_values(tmp_path: Path) -> None:
    """PyYAML's safe dumper refuses str subclasses ('cannot represent an object'): the filter
    hands plain values on (the first CI run with this filter failed so)."""
    path = tmp_path / "kueue.yaml"
    path.write_text(MANIFEST)
    tagged = {
        _Tagged("timeout"): _Tagged("10m"),
        _Tagged("requeuingStrategy"): {_Tagged("timestamp"): _Tagged("Eviction")},
    }
    objects = kueue_manager_objects(_Tagged(str(path)), tagged)
    assert _config(objects)["waitForPodsReady"] == {
        "timeout": "10m",
        "requeuingStrategy": {"timestamp": "Eviction"},
    }
