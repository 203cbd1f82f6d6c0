"""The gpu_operator role's device-plugin configs checked by NVIDIA's own code, not by our reading.

For each sharing mode (full GPUs, time-slicing, MIG), the configs the role puts in its
ConfigMap are read by the device plugin's config package (`nvdp-config`, built offline from
github.com/NVIDIA/k8s-device-plugin v0.18.1, lab/k8s-build), and NVIDIA's own Helm chart from
the same module is rendered with them by helm: the chart must carry them unchanged, select
them by the node label the role sets, and start from the role's default.

Needs `make lab-k8s` (helm, nvdp-config and the chart in the build cache); skips with the
command that builds them otherwise.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.gpu_operator import (
    gpu_operator_values,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.gpu_operator_inputs import (
    DEFAULT_CONFIG,
    DEVICE_PLUGIN_LABEL,
    OperatorHost,
    OperatorSettings,
)
from gpurack_lab import lab_kubernetes

BUILD = lab_kubernetes.build_dir()
HELM, CHECK, CHART = BUILD / "bin/helm", BUILD / "bin/nvdp-config", BUILD / "charts/nvidia-device-plugin"

POOLS: dict[str, dict[str, Any]] = {
    "full-gpu": {"name": "h100-train", "workload": "distributed-training", "sharing": "full-gpu"},
    "time-slicing": {
        "name": "h200-inference",
        "workload": "inference",
        "sharing": "time-slicing",
        "time_slicing": {"replicas": 4},
    },
    "mig": {
        "name": "a100-mig",
        "workload": "inference",
        "sharing": "mig",
        "mig": {"profiles": {"1g.10gb": 7}},
    },
}

pytestmark = pytest.mark.skipif(
    not (HELM.is_file() and CHECK.is_file() and (CHART / "Chart.yaml").is_file()),
    reason=f"helm, nvdp-config and NVIDIA's device-plugin chart are not built in {BUILD} (make lab-k8s)",
)


def _configs(mode: str) -> tuple[dict[str, str], str]:
    """The role's device-plugin ConfigMap data for one pool of `mode`, and its MIG strategy."""
    host = OperatorHost("gpu01", POOLS[mode], host_driver=True, host_toolkit=True)
    values = gpu_operator_values([host], OperatorSettings())
    return dict(values["devicePlugin"]["config"]["data"]), str(values["mig"]["strategy"])


def _nvidia_reads(tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "config.json"
    path.write_text(text)
    done = subprocess.run([str(CHECK), str(path)], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@pytest.mark.parametrize("mode", list(POOLS))
def test_nvidias_config_package_reads_each_config_the_role_writes(tmp_path: Path, mode: str) -> None:
    configs, strategy = _configs(mode)
    assert set(configs) == {DEFAULT_CONFIG, POOLS[mode]["name"]}
    read = {name: _nvidia_reads(tmp_path, text) for name, text in configs.items()}
    pool = read[POOLS[mode]["name"]]
    # A node no pool selects gets full GPUs, whatever the MIG strategy of the others.
    assert read[DEFAULT_CONFIG]["flags"]["migStrategy"] == "none"
    if mode == "time-slicing":
        assert pool["sharing"]["timeSlicing"]["resources"] == [
            {"name": "nvidia.com/gpu", "devices": "all", "replicas": 4}
        ]
    elif mode == "mig":
        assert pool["flags"]["migStrategy"] == strategy == "mixed"
    else:
        assert pool["flags"]["migStrategy"] == "none"
        assert not pool["sharing"]["timeSlicing"].get("resources")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"version": "v1", "flagz": {}}', 'unknown field "flagz"'),
        ('{"version": "v2"}', "unknown version"),
        (
            '{"version": "v1", "sharing": {"timeSlicing": {"resources":'
            ' [{"name": "nvidia.com/gpu", "replicas": 1}]}}}',
            "number of replicas must be >= 2",
        ),
    ],
)
def test_the_check_refuses_what_the_plugin_refuses(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text)
    done = subprocess.run([str(CHECK), str(path)], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 1 and says in done.stderr, done


def _render(tmp_path: Path, configs: dict[str, str], strategy: str) -> list[dict[str, Any]]:
    values = tmp_path / "values.yaml"
    values.write_text(
        yaml.safe_dump({"config": {"map": configs, "default": DEFAULT_CONFIG}, "migStrategy": strategy})
    )
    done = subprocess.run(
        [str(HELM), "template", "nvdp", str(CHART), "--namespace", "nvidia-device-plugin", "-f", str(values)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


@pytest.mark.parametrize("mode", list(POOLS))
def test_nvidias_chart_carries_the_configs_and_selects_them_by_the_roles_label(
    tmp_path: Path, mode: str
) -> None:
    configs, strategy = _configs(mode)
    objects = _render(tmp_path, configs, strategy)
    (config_map,) = [
        o for o in objects if o["kind"] == "ConfigMap" and set(o.get("data", {})) == set(configs)
    ]
    assert config_map["data"] == configs
    plugin = next(
        o for o in objects if o["kind"] == "DaemonSet" and "gpu-feature" not in o["metadata"]["name"]
    )
    containers = [
        *plugin["spec"]["template"]["spec"].get("initContainers", []),
        *plugin["spec"]["template"]["spec"]["containers"],
    ]
    env = {e["name"]: e.get("value") for c in containers for e in c.get("env", [])}
    # The config manager picks a node's config by the label the gpu_operator role sets.
    assert env["NODE_LABEL"] == DEVICE_PLUGIN_LABEL
    assert env["DEFAULT_CONFIG"] == DEFAULT_CONFIG
