"""gpu_operator role: argument specs, off by default, refusals before any change, node labels, helm template.

The chart and its images cannot be had here, so the role never installs anything in these
tests: they run it on this machine (-c local) up to the first cluster call, and render the
chart with `helm template` only when GPURACK_GPU_OPERATOR_CHART names a chart archive.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.filter.gpu_operator import gpu_operator_values

REPO = Path(__file__).resolve().parents[2]
ROLE = REPO / "roles" / "gpu_operator"
TAINTS = [{"key": "gpurack.io/pool", "value": "train", "effect": "NoSchedule"}]
TRAIN = {"name": "train", "workload": "distributed-training", "sharing": "full-gpu", "taints": TAINTS}
INFER = {"name": "infer", "workload": "inference", "sharing": "time-slicing", "time_slicing": {"replicas": 4}}
MIG = {"name": "mig7", "workload": "inference", "sharing": "mig", "mig": {"profiles": {"1g.18gb": 7}}}
GPU = {
    "available": True,
    "count": 1,
    "gpus": [{"index": 0, "name": "NVIDIA H200", "pci_device_id": "0x2335"}],
}
NIC = {"available": True, "net": [{"name": "eth0"}], "rdma": []}


def _playbook(
    tmp_path: Path, hosts: dict[str, dict[str, Any]], tasks: str, *extra: str
) -> tuple[int, dict[str, Any]]:
    """Run `tasks` over `hosts` (all in gpu_nodes, local); the exit code and the json callback's report."""
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory = {"all": {"children": {"gpu_nodes": {"hosts": {h: {**local, **v} for h, v in hosts.items()}}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text(
        f"- name: Case\n  hosts: gpu_nodes\n  gather_facts: false\n  tasks:\n{tasks}"
    )
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json",
        "ANSIBLE_NOCOLOR": "1",
    }
    cmd = [
        str(Path(sys.executable).parent / "ansible-playbook"),
        "-i",
        str(tmp_path / "inventory.yml"),
        *extra,
    ]
    proc = subprocess.run(
        [*cmd, str(tmp_path / "play.yml")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return proc.returncode, json.loads(proc.stdout[proc.stdout.index("{") :])


ROLE_TASKS = (
    "    - name: Run the role\n"
    "      ansible.builtin.include_role:\n"
    "        name: gpurack.bootstrap.gpu_operator\n"
)


def _ran(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Task name -> {host: result} of every task that ran (not skipped) on some host."""
    ran: dict[str, dict[str, Any]] = {}
    for play in report["plays"]:
        for task in play["tasks"]:
            hosts = {h: r for h, r in task["hosts"].items() if not r.get("skipped")}
            if hosts:  # "role : task" in the json callback: keep the task's own name
                ran[task["task"]["name"].rpartition(" : ")[2]] = hosts
    return ran


def test_argument_specs_list_every_default_and_nothing_else() -> None:
    specs = yaml.safe_load((ROLE / "meta/argument_specs.yml").read_text())["argument_specs"]["main"][
        "options"
    ]
    defaults = yaml.safe_load((ROLE / "defaults/main.yml").read_text())
    assert set(specs) == set(defaults)
    for name, spec in specs.items():
        assert name.startswith("gpu_operator_")
        assert spec.get("description"), name
        if "default" in spec:
            assert spec["default"] == defaults[name], name
    assert defaults["gpu_operator_enabled"] is False


def test_the_role_does_nothing_unless_enabled(tmp_path: Path) -> None:
    rc, report = _playbook(tmp_path, {"g1": {"gpurack_pool": TRAIN}}, ROLE_TASKS, "--check")
    assert rc == 0
    ran = _ran(report)
    assert "Say why the GPU Operator is not installed" in ran
    assert not [name for name in ran if "chart" in name.lower() or "label" in name.lower()]


def test_an_operator_driver_beside_a_host_driver_is_refused_before_any_change(tmp_path: Path) -> None:
    hosts: dict[str, dict[str, Any]] = {
        "t1": {"gpurack_pool": TRAIN},
        "t2": {"gpurack_pool": TRAIN},
        "i1": {"gpurack_pool": INFER, "nvidia_driver_managed_by": "operator"},
    }
    extra = ["-e", "gpu_operator_enabled=true", "-e", "gpu_operator_service_monitor=false"]
    rc, report = _playbook(
        tmp_path, hosts, ROLE_TASKS, "--check", *extra, "-e", "gpu_operator_driver_enabled=true"
    )
    assert rc != 0
    ran = _ran(report)
    failed = ran["Make the chart's values from every GPU host's pool, driver and toolkit"]
    message = next(r["msg"] for r in failed.values() if r.get("failed"))
    assert "gpu_operator_driver_enabled is true, but gpurack installed the NVIDIA driver" in message
    assert "pool train: t1, t2" in message
    # Nothing after it ran on any host: no label, no namespace, no chart.
    names = list(ran)
    assert names[-1] == "Make the chart's values from every GPU host's pool, driver and toolkit"


def _derived_labels(tmp_path: Path, enabled: bool) -> dict[str, str]:
    tasks = (
        "    - name: Derive\n      ansible.builtin.include_role:\n"
        "        name: gpurack.bootstrap.node_labels\n        tasks_from: derive\n"
        "    - name: Show\n      ansible.builtin.debug:\n        var: __node_labels_labels\n"
    )
    host = {"gpurack_pool": MIG, "gpurack_gpu": GPU, "gpurack_nic": NIC, "gpu_operator_enabled": enabled}
    rc, report = _playbook(tmp_path, {"g1": host}, tasks, "--check")
    assert rc == 0, report
    labels: dict[str, str] = _ran(report)["Show"]["g1"]["__node_labels_labels"]
    return labels


def test_node_labels_add_the_config_labels_only_with_the_operator(tmp_path: Path) -> None:
    on = _derived_labels(tmp_path, True)
    assert on["nvidia.com/device-plugin.config"] == "mig7"
    assert on["nvidia.com/mig.config"] == "mig7"
    assert on["gpurack.io/pool"] == "mig7"
    off = _derived_labels(tmp_path, False)
    assert "nvidia.com/device-plugin.config" not in off
    assert "nvidia.com/mig.config" not in off
    assert {k: v for k, v in on.items() if not k.startswith("nvidia.com/")} == off


def _helm() -> str | None:
    if found := os.environ.get("GPURACK_HELM") or shutil.which("helm"):
        return found
    cache = Path(os.environ.get("GPURACK_K8S_CACHE", Path.home() / ".cache/gpurack/k8s"))
    return next((str(p) for p in sorted(cache.glob("*/bin/helm"))), None)


CHART = os.environ.get("GPURACK_GPU_OPERATOR_CHART", "")


@pytest.mark.skipif(
    not CHART, reason="GPU Operator chart not available offline (set GPURACK_GPU_OPERATOR_CHART)"
)
def test_helm_template_renders_the_values_into_the_cluster_policy(tmp_path: Path) -> None:
    helm = _helm()
    if helm is None:
        pytest.skip("no helm binary (lab/k8s-build/build.sh --only helm, or GPURACK_HELM)")
    hostvars: dict[str, dict[str, Any]] = {
        "t1": {"gpurack_pool": TRAIN},
        "i1": {"gpurack_pool": INFER},
        "m1": {"gpurack_pool": MIG},
    }
    values = gpu_operator_values(hostvars, list(hostvars), {"registry": "mirror.example:5000"})
    (tmp_path / "values.yaml").write_text(yaml.safe_dump(values))
    cmd = [helm, "template", "gpu-operator", CHART, "-n", "gpu-operator", "-f", str(tmp_path / "values.yaml")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    objects = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    policy = next(d for d in docs if d["kind"] == "ClusterPolicy")["spec"]
    assert policy["driver"]["enabled"] is False
    assert policy["toolkit"]["enabled"] is False
    assert policy["mig"]["strategy"] == "mixed"
    assert policy["devicePlugin"]["config"] == {
        "name": "gpurack-device-plugin-config",
        "default": "gpurack-default",
    }
    assert policy["migManager"]["config"]["name"] == "gpurack-mig-parted-config"
    assert policy["dcgmExporter"]["enabled"] is True
    assert policy["dcgmExporter"]["serviceMonitor"]["enabled"] is False
    assert {"key": "gpurack.io/validating", "operator": "Exists"} in policy["daemonsets"]["tolerations"]
    assert policy["validator"]["plugin"]["env"] == [{"name": "WITH_WORKLOAD", "value": "false"}]
    assert policy["devicePlugin"]["repository"] == "mirror.example:5000/nvidia"
    plugin = objects[("ConfigMap", "gpurack-device-plugin-config")]["data"]
    assert sorted(plugin) == ["gpurack-default", "infer", "mig7", "train"]
    assert yaml.safe_load(plugin["infer"])["sharing"]["timeSlicing"]["resources"][0]["replicas"] == 4
    mig = yaml.safe_load(objects[("ConfigMap", "gpurack-mig-parted-config")]["data"]["config.yaml"])
    assert mig["mig-configs"]["mig7"][0]["mig-devices"] == {"1g.18gb": 7}
    images = [
        c["image"]
        for d in docs
        if d["kind"] == "Deployment"
        for c in d["spec"]["template"]["spec"]["containers"]
    ]
    assert images and all(i.startswith("mirror.example:5000/") for i in images), images
