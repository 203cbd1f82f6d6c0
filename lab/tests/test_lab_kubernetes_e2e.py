"""End to end on real Kubernetes: lab up --kubernetes, `gpurack run site`, then the cluster.

One control plane and two workers replaying real captures (h200x1, hgx-h100x8-ib), the
offline Kubernetes build (`make lab-k8s`), kubeadm init/join, labels and taints from the
facts, validation lifting the validating taint; asserted through the kubernetes client.
The hosts themselves are read over SSH (the replayed hardware, the prepared state); a join
batch whose first host is already joined leaves no bootstrap token behind; and a last
worker started with a real fault (`ib-port-down`) fails preflight on that one check.
All of it on the session's one lab cluster (conftest.py), which goes down with nothing left.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpurack import cli, prometheus
from gpurack_lab import lab_kubernetes, rack
from gpurack_lab.state import load
from kubernetes import client, config
from lab_helpers import LabCluster, hosts_in_events, json_run, ssh, validation_reused
from lab_helpers import wait as _wait

pytestmark = pytest.mark.kubernetes

POOL_H200 = {
    "gpurack.io/pool": "lab-h200x1",
    "gpurack.io/accelerator": "h200-141gb",
    "gpurack.io/topology": "1gpu-sxm-single",
    "gpurack.io/fabric": "ethernet",
    "gpurack.io/workload": "inference",
    "gpurack.io/sharing": "full-gpu",
}
POOL_HGX = {
    "gpurack.io/pool": "lab-hgx-h100x8-ib",
    "gpurack.io/accelerator": "h100-80gb",
    "gpurack.io/topology": "8gpu-sxm-nvlink",
    "gpurack.io/fabric": "infiniband",
    "gpurack.io/workload": "distributed-training",
    "gpurack.io/sharing": "full-gpu",
}
HOST_VARS = rack.hosts_file().parent / "host_vars"


def _ready(node: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])


def _gpurack_labels(node: Any) -> dict[str, str]:
    return {k: v for k, v in (node.metadata.labels or {}).items() if k.startswith("gpurack.io/")}


def _taints(node: Any) -> list[tuple[str, str, str]]:
    return sorted((t.key, t.value or "", t.effect) for t in node.spec.taints or [])


def _pool_taint(pool: str) -> tuple[str, str, str]:
    return ("gpurack.io/pool", pool, "NoSchedule")


@pytest.fixture
def lab(lab_cluster: LabCluster) -> Iterator[LabCluster]:
    """The session's lab with Kubernetes (conftest.py); host_vars this test wrote are removed after."""
    try:
        yield lab_cluster
    finally:
        for leftover in HOST_VARS.glob("*.yml"):
            leftover.unlink()


def test_site_builds_a_labelled_validated_cluster(
    lab: LabCluster, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    inventory = str(rack.hosts_file().parent)
    _assert_lab_up_again_changes_nothing(lab, capsys)
    _assert_hosts_replay_their_hardware()
    code, first = json_run(["run", "site", "-i", inventory], capsys)
    assert code == 0, first
    _assert_prepared_state()
    config.load_kube_config(config_file=str(lab_kubernetes.kubeconfig()))
    core = client.CoreV1Api()

    # 3 nodes Ready.
    nodes = _wait(
        "3 Ready nodes",
        lambda: (items := core.list_node().items) and len(items) == 3 and all(map(_ready, items)) and items,
    )
    assert sorted(n.metadata.name for n in nodes) == ["lab-cp1", "lab-w1", "lab-w2"]

    _assert_labels_and_taints_from_the_facts(core)

    # The lab's stand-in for the device plugin advertises the replayed GPUs.
    _wait(
        "nvidia.com/gpu on both workers",
        lambda: (
            [(core.read_node(n).status.allocatable or {}).get("nvidia.com/gpu") for n in ("lab-w1", "lab-w2")]
            == ["1", "8"]
        ),
    )

    # A GPU pod schedules only with its pool's toleration, and then only on that pool's node.
    _assert_gpu_scheduling(core)
    # Pods on different nodes reach each other, by name through CoreDNS.
    _assert_pod_network(core)

    # A second run changes nothing.
    code, second = json_run(["run", "site", "-i", inventory], capsys)
    assert code == 0, second
    assert [h for h in second["hosts"] if h["changed"]] == [], second
    # Every prepare stamp held: validate reuses preflight's reading of this run.
    assert validation_reused(Path(second["artifact_dir"])) == {"lab-w1": True, "lab-w2": True}
    _assert_a_hand_edit_is_put_back(inventory, capsys)

    _assert_inventory_label_added_then_removed(core, inventory, capsys)
    _assert_validation_taint_follows_the_verdict(core, inventory, capsys)
    _assert_stale_node_refused_then_replaced(core, inventory, capsys)
    _assert_grown_worker_joins_alone(lab, core, inventory, capsys)
    _assert_join_token_deleted_when_the_first_host_is_joined(core, inventory, capsys)
    _assert_preflight_fails_only_the_faulty_worker(lab, inventory, tmp_path / "reports", capsys)


def _assert_lab_up_again_changes_nothing(lab: LabCluster, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert cli.main(lab.up_argv(lab.workers)) == 0, "a second lab up must report the running lab"
    assert "lab already up" in capsys.readouterr().out


def _assert_hosts_replay_their_hardware() -> None:
    """Over SSH with the lab key: the replayed nvidia-smi, its refusal of what the capture
    lacks (exit 2), and the loop disks as NVMe namespaces."""
    assert ssh("lab-w2", "hostname").stdout.strip() == "lab-w2"
    smi = ssh("lab-w2", "nvidia-smi -q")
    assert smi.returncode == 0
    assert "Attached GPUs                             : 8" in smi.stdout
    assert ssh("lab-w2", "nvidia-smi dmon").returncode == 2
    assert ssh("lab-w1", "test -b /dev/nvme0n1 && test -b /dev/nvme1n1").returncode == 0


def _assert_prepared_state() -> None:
    """What prepare left, read over SSH: scratch XFS mounted, containerd running, sysctls
    persisted, and nvidia-peermem loaded at boot on the worker with GPUs and RDMA."""
    for host in ("lab-w1", "lab-w2"):
        assert "xfs" in ssh(host, "findmnt -n -o FSTYPE /raid").stdout, host
        assert ssh(host, "systemctl is-active containerd").stdout.strip() == "active", host
        assert "net.ipv4.ip_forward" in ssh(host, "cat /etc/sysctl.d/90-gpurack.conf").stdout, host
    assert "nvidia-peermem" in ssh("lab-w2", "cat /etc/modules-load.d/nvidia-peermem.conf").stdout


def _assert_preflight_fails_only_the_faulty_worker(
    lab: LabCluster, inventory: str, reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker started with its first IB port down fails preflight on that one check; a
    healthy worker of the same profile passes (its warnings do not fail the lab's pools)."""
    assert lab.grow(4, ("ib-port-down@lab-w4",)) == 0
    capsys.readouterr()
    code, result = json_run(
        ["run", "preflight", "-i", inventory, "-l", "lab-w2,lab-w4", "-e", f"preflight_report_dir={reports}"],
        capsys,
    )
    assert code == 1, result
    healthy = json.loads((reports / "lab-w2.json").read_text())
    faulty = json.loads((reports / "lab-w4.json").read_text())
    # The real HGX capture warns (clock slowdown reasons); warnings do not fail preflight in
    # the lab's pools (preflight_fail_on_warn: false).
    assert healthy["summary"]["verdict"] in {"pass", "warn"}
    assert healthy["summary"]["fail"] == 0
    assert [h["host"] for h in result["hosts"] if h["failed"]] == ["lab-w4"]
    assert faulty["summary"]["verdict"] == "fail"
    failed = [r for r in faulty["results"] if r["verdict"] == "fail"]
    assert [r["id"] for r in failed] == ["rdma.ports.state"]
    port = failed[0]
    assert "mlx5_0" in f"{port['measured']} {port['reason']}"
    assert port["expected"] is not None
    assert port["remediation"]


def _assert_labels_and_taints_from_the_facts(core: Any) -> None:
    """Labels exactly as derived from each worker's capture and pool; the role label from the
    controller; after validation only the pool taint is left.
    """
    w1, w2 = core.read_node("lab-w1"), core.read_node("lab-w2")
    assert _gpurack_labels(w1) == POOL_H200
    assert _gpurack_labels(w2) == POOL_HGX
    for node in (w1, w2):
        assert node.metadata.labels["node-role.kubernetes.io/gpu"] == ""
        # No switches in this lab: the topology levels are the inventory's rack and block,
        # under NVIDIA Topograph's keys.
        assert node.metadata.labels["network.topology.nvidia.com/leaf"] == "lab-rack1"
        assert node.metadata.labels["network.topology.nvidia.com/spine"] == "lab-block1"
        assert "gpurack.io/validation-failed" not in (node.metadata.annotations or {})
    assert _taints(w1) == [_pool_taint("lab-h200x1")]
    assert _taints(w2) == [_pool_taint("lab-hgx-h100x8-ib")]
    assert not _gpurack_labels(core.read_node("lab-cp1"))


def _assert_a_hand_edit_is_put_back(inventory: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A converged re-run skips os_tuning on its converge stamp; a managed file edited by hand
    makes the stamp fail on that host only, the role puts the file back, and validate reads
    that node again."""
    sysctls = "/etc/sysctl.d/90-gpurack.conf"
    before = ssh("lab-w1", f"cat {sysctls}").stdout
    assert ssh("lab-w1", f"echo 'vm.max_map_count = 1' >> {sysctls}").returncode == 0
    code, fixed = json_run(["run", "site", "-i", inventory, "-l", "lab-w1,lab-w2"], capsys)
    assert code == 0, fixed
    assert {h["host"]: h["changed"] for h in fixed["hosts"]} == {"lab-w1": 1, "lab-w2": 0}, fixed
    assert ssh("lab-w1", f"cat {sysctls}").stdout == before
    # os_tuning ran on lab-w1, so validate reads that node again; lab-w2 is as preflight read it.
    assert validation_reused(Path(fixed["artifact_dir"])) == {"lab-w1": False, "lab-w2": True}


def _assert_inventory_label_added_then_removed(
    core: Any, inventory: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A label added to a pool in the inventory appears; removed again, it leaves the node."""
    HOST_VARS.mkdir(exist_ok=True)
    pool = {
        "name": "lab-h200x1",
        "workload": "inference",
        "sharing": "full-gpu",
        "taints": [{"key": "gpurack.io/pool", "value": "lab-h200x1", "effect": "NoSchedule"}],
    }
    (HOST_VARS / "lab-w1.yml").write_text(
        yaml.safe_dump({"gpurack_pool": {**pool, "labels": {"team": "vision"}}})
    )
    # Labels are the join phase's (node_labels), so the join playbook alone shows them.
    code, added = json_run(["run", "join", "-i", inventory, "-l", "lab-w1"], capsys)
    assert code == 0, added
    assert core.read_node("lab-w1").metadata.labels.get("team") == "vision"
    (HOST_VARS / "lab-w1.yml").unlink()
    code, removed = json_run(["run", "join", "-i", inventory, "-l", "lab-w1"], capsys)
    assert code == 0, removed
    assert [h["changed"] for h in removed["hosts"]] == [1], removed
    w1 = core.read_node("lab-w1")
    assert "team" not in w1.metadata.labels
    assert _gpurack_labels(w1) == POOL_H200


def _assert_validation_taint_follows_the_verdict(
    core: Any, inventory: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A failed validation puts the validating taint back and says why; a pass lifts it."""
    code, failed = json_run(
        [
            "run",
            "validate",
            "-i",
            inventory,
            "-l",
            "lab-w1",
            "-e",
            '{"gpurack_expect": {"gpu": {"count": 2}}}',
        ],
        capsys,
    )
    assert code != 0 and failed["failed"] == ["lab-w1"], failed
    w1 = core.read_node("lab-w1")
    assert ("gpurack.io/validating", "", "NoSchedule") in _taints(w1)
    assert "gpu.count" in w1.metadata.annotations["gpurack.io/validation-failed"]
    # `kubectl describe node` says why (the Node condition), and Prometheus has the verdict
    # from the node exporter's textfile, asked through its HTTP API.
    (validated,) = [c for c in w1.status.conditions if c.type == "GpurackValidated"]
    assert (validated.status, validated.reason) == ("False", "ChecksFailed"), validated
    assert "gpu.count" in validated.message, validated
    _wait(
        "Prometheus to hold lab-w1's failing gpu.count",
        lambda: any(
            c.node == "lab-w1" and c.check == "gpu.count"
            for c in prometheus.failing_checks(_prometheus_url())
        ),
        timeout_s=120,
    )
    code, passed = json_run(["run", "validate", "-i", inventory, "-l", "lab-w1"], capsys)
    assert code == 0, passed
    w1 = core.read_node("lab-w1")
    assert _taints(w1) == [_pool_taint("lab-h200x1")]
    assert "gpurack.io/validation-failed" not in (w1.metadata.annotations or {})
    (validated,) = [c for c in w1.status.conditions if c.type == "GpurackValidated"]
    assert (validated.status, validated.reason) == ("True", "ChecksPassed"), validated


def _prometheus_url() -> str:
    """The lab's Prometheus (roles/observability on the control plane), at its container's address."""
    state = load(rack.state_file())
    assert state is not None
    host = state.host("lab-cp1")
    assert host is not None
    return f"http://{host.ip}:9090"


def _assert_stale_node_refused_then_replaced(
    core: Any, inventory: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A re-imaged host whose old Node is still there is refused, then replaced on request."""
    assert ssh("lab-w2", "kubeadm reset --force").returncode == 0
    # The refusal is kubeadm_join's; the rejoin runs site, whose validation lifts the taint.
    code, refused = json_run(["run", "join", "-i", inventory, "-l", "lab-w2"], capsys)
    assert code != 0 and refused["failed"] == ["lab-w2"], refused
    code, rejoined = json_run(
        ["run", "site", "-i", inventory, "-l", "lab-w2", "-e", "kubeadm_join_replace_stale=true"], capsys
    )
    assert code == 0, rejoined
    w2 = _wait("lab-w2 Ready again", lambda: _ready(node := core.read_node("lab-w2")) and node)
    assert _gpurack_labels(w2) == POOL_HGX
    assert _taints(w2) == [_pool_taint("lab-hgx-h100x8-ib")]


def _assert_grown_worker_joins_alone(
    lab: LabCluster, core: Any, inventory: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """One more worker joins with --limit, and the others are not touched by that run. The
    snapshot is taken after `lab up` grew the rack: the lab's own tooling (not gpurack) annotates
    every worker's Node with the GPUs it emulates, lab-w2's again since it was replaced above."""
    assert lab.grow(3) == 0
    before = {n: _metadata(core, n) for n in ("lab-w1", "lab-w2")}
    capsys.readouterr()
    code, grown = json_run(["run", "site", "-i", inventory, "-l", "lab-w3"], capsys)
    assert code == 0, grown
    assert [h["host"] for h in grown["hosts"]] == ["lab-w3"], grown
    # No task ran for, was delegated to or gathered facts from the workers outside the limit.
    hosts, delegated = hosts_in_events(Path(grown["artifact_dir"]))
    state = load(rack.state_file())
    assert state is not None
    others = {h.ip for h in state.hosts if h.name in ("lab-w1", "lab-w2")}
    assert hosts == {"lab-w3"} and not delegated & others, (hosts, delegated)
    w3 = _wait("lab-w3 Ready", lambda: _ready(node := core.read_node("lab-w3")) and node)
    assert _gpurack_labels(w3) == POOL_HGX
    assert _taints(w3) == [_pool_taint("lab-hgx-h100x8-ib")]
    assert {n: _metadata(core, n) for n in ("lab-w1", "lab-w2")} == before


def _join_tokens(core: Any) -> list[str]:
    """The bootstrap-token Secrets that kubeadm_join made (its description), by name."""
    secrets = core.list_namespaced_secret("kube-system", field_selector="type=bootstrap.kubernetes.io/token")
    return sorted(
        s.metadata.name
        for s in secrets.items
        if base64.b64decode((s.data or {}).get("description", "")).decode().startswith("gpurack kubeadm_join")
    )


def _assert_join_token_deleted_when_the_first_host_is_joined(
    core: Any, inventory: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A batch whose first host (lab-w1) is already joined and whose last (lab-w3) joins again:
    the batch's token is deleted all the same. It used to live to its TTL, as the run_once
    delete's condition was read on that first host (issue 13)."""
    assert _join_tokens(core) == []  # every earlier join deleted its token
    assert ssh("lab-w3", "kubeadm reset --force").returncode == 0
    core.delete_node("lab-w3")
    _wait("lab-w3's Node deleted", lambda: "lab-w3" not in {n.metadata.name for n in core.list_node().items})
    capsys.readouterr()
    # site, as for the stale node: its join play takes the three as one batch (serial 100%).
    code, joined = json_run(["run", "site", "-i", inventory, "-l", "lab-w1,lab-w2,lab-w3"], capsys)
    assert code == 0, joined
    w3 = _wait("lab-w3 joined and Ready", lambda: _ready(node := core.read_node("lab-w3")) and node)
    assert _gpurack_labels(w3) == POOL_HGX
    assert _join_tokens(core) == []
    # The same from the control plane, as kubeadm sees it.
    listed = ssh("lab-cp1", "kubeadm token list --kubeconfig=/etc/kubernetes/admin.conf")
    assert listed.returncode == 0, listed.stderr
    assert "gpurack kubeadm_join" not in listed.stdout, listed.stdout


def _metadata(core: Any, name: str) -> tuple[Any, ...]:
    node = core.read_node(name)
    return (node.metadata.labels, node.metadata.annotations, _taints(node), node.metadata.creation_timestamp)


def _pause_pod(name: str, tolerations: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "tolerations": tolerations,
            "containers": [
                {
                    "name": "main",
                    "image": "registry.gpurack.lab/pause:3.10.2",
                    "resources": {"limits": {"nvidia.com/gpu": "1"}},
                }
            ],
        },
    }


def _assert_gpu_scheduling(core: Any) -> None:
    h200 = [{"key": "gpurack.io/pool", "operator": "Equal", "value": "lab-h200x1", "effect": "NoSchedule"}]
    core.create_namespaced_pod("default", _pause_pod("gpu-untolerated", []))
    core.create_namespaced_pod("default", _pause_pod("gpu-h200", h200))
    try:
        placed = _wait(
            "the tolerating GPU pod to run",
            lambda: (
                (pod := core.read_namespaced_pod("gpu-h200", "default")).status.phase == "Running" and pod
            ),
        )
        assert placed.spec.node_name == "lab-w1"
        untolerated = core.read_namespaced_pod("gpu-untolerated", "default")
        assert untolerated.status.phase == "Pending"
        assert untolerated.spec.node_name is None
        unschedulable = [c for c in untolerated.status.conditions or [] if c.type == "PodScheduled"]
        assert unschedulable and unschedulable[0].reason == "Unschedulable"
        assert "untolerated taint" in unschedulable[0].message
    finally:
        for name in ("gpu-untolerated", "gpu-h200"):
            core.delete_namespaced_pod(name, "default", grace_period_seconds=0)


def _etcd_member(name: str, node: str) -> dict[str, Any]:
    """An etcd member pinned to `node`: it becomes healthy only when it reaches its peer by name."""
    peers = "a=http://a.etcd-peers.default.svc.cluster.local:2380,b=http://b.etcd-peers.default.svc.cluster.local:2380"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"etcd-{name}", "labels": {"app": "etcd-peers"}},
        "spec": {
            "nodeName": node,
            "hostname": name,
            "subdomain": "etcd-peers",
            "containers": [
                {
                    "name": "etcd",
                    "image": "registry.gpurack.lab/etcd:3.6.8-0",
                    "command": [
                        "etcd",
                        f"--name={name}",
                        "--data-dir=/var/lib/etcd/data",
                        "--listen-peer-urls=http://0.0.0.0:2380",
                        "--listen-client-urls=http://0.0.0.0:2379",
                        f"--initial-advertise-peer-urls=http://{name}.etcd-peers.default.svc.cluster.local:2380",
                        f"--advertise-client-urls=http://{name}.etcd-peers.default.svc.cluster.local:2379",
                        f"--initial-cluster={peers}",
                        "--initial-cluster-state=new",
                    ],
                    "readinessProbe": {"httpGet": {"path": "/health", "port": 2379}, "periodSeconds": 2},
                }
            ],
        },
    }


def _assert_pod_network(core: Any) -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "etcd-peers"},
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": {"app": "etcd-peers"},
            "ports": [{"name": "peer", "port": 2380}],
        },
    }
    core.create_namespaced_service("default", service)
    core.create_namespaced_pod("default", _etcd_member("a", "lab-w1"))
    core.create_namespaced_pod("default", _etcd_member("b", "lab-w2"))
    try:
        # /health answers 200 only once the two members elected a leader, which needs both
        # to resolve each other through CoreDNS and talk across the nodes' pod networks.
        _wait(
            "both etcd members Ready",
            lambda: all(
                any(
                    c.type == "Ready" and c.status == "True"
                    for c in core.read_namespaced_pod(p, "default").status.conditions or []
                )
                for p in ("etcd-a", "etcd-b")
            ),
            timeout_s=240,
        )
        ips = {core.read_namespaced_pod(p, "default").status.pod_ip for p in ("etcd-a", "etcd-b")}
        assert {ip.rsplit(".", 2)[0] for ip in ips} == {"10.244"} and len(
            {ip.split(".")[2] for ip in ips}
        ) == 2
    finally:
        for name in ("etcd-a", "etcd-b"):
            core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
        core.delete_namespaced_service("etcd-peers", "default")
