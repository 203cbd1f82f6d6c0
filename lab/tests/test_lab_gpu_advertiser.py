"""The lab's GPU advertiser: what it advertises for each sharing mode, and the patch that gets it there.

The template is rendered as the lab playbook renders it (its resources from the filter
gpurack.bootstrap.pool_gpu_resources, the device plugin's naming) and its own function
run here: no node, no Docker.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jinja2
import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.filter.gpu_operator import pool_gpu_resources

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "lab" / "playbooks" / "templates" / "gpurack-lab-gpu-advertiser.py.j2"
PLAYBOOK = REPO / "lab" / "playbooks" / "lab_kubernetes.yml"
FULL = {"name": "lab-h200x1", "workload": "inference", "sharing": "full-gpu"}
SLICED = {
    "name": "lab-ts",
    "workload": "inference",
    "sharing": "time-slicing",
    "time_slicing": {"replicas": 4},
}
MIG = {"name": "lab-mig", "workload": "inference", "sharing": "mig", "mig": {"profiles": {"1g.18gb": 7}}}


def advertiser(pool: dict[str, Any], gpus: int) -> SimpleNamespace:
    """The rendered advertiser of a node of `pool` with `gpus` GPUs, as a module (its loop not started)."""
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    env.filters["comment"] = lambda text: "#\n# " + text + "\n#"
    env.filters["to_json"] = json.dumps
    source = env.from_string(TEMPLATE.read_text()).render(
        ansible_managed="Ansible managed",
        inventory_hostname="lab-w1",
        __lab_gpu_resources=pool_gpu_resources(pool, gpus),
    )
    namespace: dict[str, Any] = {"__name__": "gpurack_lab_gpu_advertiser"}
    exec(compile(source, str(TEMPLATE), "exec"), namespace)  # our own template
    return SimpleNamespace(**namespace)


@pytest.mark.parametrize(
    ("pool", "gpus", "resources"),
    [
        (FULL, 8, {"nvidia.com/gpu": 8}),
        (SLICED, 8, {"nvidia.com/gpu": 32}),
        (
            {**SLICED, "time_slicing": {"replicas": 2, "rename_by_default": True}},
            1,
            {"nvidia.com/gpu.shared": 2},
        ),
        (MIG, 8, {"nvidia.com/mig-1g.18gb": 56}),
    ],
)
def test_the_advertiser_advertises_what_the_device_plugin_would(
    pool: dict[str, Any], gpus: int, resources: dict[str, int]
) -> None:
    module = advertiser(pool, gpus)
    assert module.NODE == "lab-w1"
    assert resources == module.RESOURCES
    ops = module.capacity_patch({"cpu": "4", "memory": "8Gi"}, module.RESOURCES)
    assert ops == [
        {"op": "add", "path": "/status/capacity/" + name.replace("/", "~1"), "value": str(count)}
        for name, count in sorted(resources.items())
    ]


def test_a_node_already_advertising_its_resources_is_not_patched() -> None:
    module = advertiser(MIG, 8)
    assert module.capacity_patch({"cpu": "4", "nvidia.com/mig-1g.18gb": "56"}, module.RESOURCES) == []


def test_a_sharing_change_removes_the_old_resources_and_nothing_else() -> None:
    module = advertiser(MIG, 8)
    capacity = {"cpu": "4", "nvidia.com/gpu": "8", "example.com/dongle": "1"}
    assert module.capacity_patch(capacity, module.RESOURCES) == [
        {"op": "remove", "path": "/status/capacity/nvidia.com~1gpu"},
        {"op": "add", "path": "/status/capacity/nvidia.com~1mig-1g.18gb", "value": "56"},
    ]
    back = advertiser(FULL, 8)
    assert back.capacity_patch({"nvidia.com/mig-1g.18gb": "56"}, back.RESOURCES) == [
        {"op": "remove", "path": "/status/capacity/nvidia.com~1mig-1g.18gb"},
        {"op": "add", "path": "/status/capacity/nvidia.com~1gpu", "value": "8"},
    ]


def test_a_changed_count_is_replaced() -> None:
    module = advertiser(SLICED, 1)
    assert module.capacity_patch({"nvidia.com/gpu": "1"}, module.RESOURCES) == [
        {"op": "add", "path": "/status/capacity/nvidia.com~1gpu", "value": "4"}
    ]


def test_the_lab_playbook_renders_the_advertiser_with_the_pools_resources() -> None:
    variables = yaml.safe_load(PLAYBOOK.read_text())[0]["vars"]
    expression = variables["__lab_gpu_resources"].replace(" ", "")
    assert expression == "{{gpurack_pool|gpurack.bootstrap.pool_gpu_resources(__lab_gpus|int)}}"


@pytest.mark.parametrize("pool_file", sorted((REPO / "lab/inventory/group_vars").glob("*/pool.yml")))
def test_every_lab_pool_tells_the_advertiser_what_to_advertise(pool_file: Path) -> None:
    pool = yaml.safe_load(pool_file.read_text())["gpurack_pool"]
    assert pool_gpu_resources(pool, 8)
