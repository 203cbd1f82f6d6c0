"""The lab's conformance settings name images the lab really loads."""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def _yaml(path: str) -> dict[str, object]:
    data = yaml.safe_load((REPO / path).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_the_device_probe_uses_the_load_tools_image() -> None:
    """The probe's image is the load tool's, under the same name and tag the inference test
    loads onto both workers, so that it is on the node without a registry."""
    loadgen = str(_yaml("roles/inference_acceptance/defaults/main.yml")["inference_acceptance_loadgen_image"])
    repository = str(_yaml("lab/inventory/group_vars/all/kubernetes.yml")["lab_k8s_image_repository"])
    probe = str(_yaml("lab/inventory/group_vars/all/conformance.yml")["conformance_probe_image"])
    name = loadgen.split("/", 1)[1]
    assert loadgen == f"{repository}/{name}"
    assert f"lab_k8s_image_repository ~ '/{name}'" in probe
