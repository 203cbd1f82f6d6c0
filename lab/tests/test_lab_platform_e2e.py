"""Kueue and NetworkPolicy on the session's lab cluster (docs/platform.md "Kueue and NetworkPolicy
in the lab").

Kueue v0.17.0 as lab/k8s-build made it (manager image, CRDs from controller-gen) is installed
through roles/kueue/tasks/install.yml, which returns only once the webhook answers; a second
run changes nothing. A ResourceFlavor for the h200 pool, a ClusterQueue and a LocalQueue made
by hand then admit a suspended Job, which runs on that pool's node with the toleration the
flavor injects. kube-network-policies (lab/playbooks/lab_network_policies.yml) makes the
lab's bridge CNI enforce NetworkPolicy: a default deny blocks pod-to-pod TCP across nodes,
and an allow for the client's label lets it through.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from gpurack.errors import ExitCode
from gpurack.runner import RunRequest, RunResult, run_playbook
from gpurack_lab import lab_kubernetes, rack
from gpurack_lab.paths import playbook
from gpurack_lab.state import lab_dir
from kubernetes import client, config
from lab_helpers import LabCluster, ensure_site, ssh

pytestmark = pytest.mark.kubernetes

KUEUE = ("kueue.x-k8s.io", "v1beta2")
NETCHECK = "registry.gpurack.lab/netcheck:v1"
NS_QUEUE, NS_NETPOL = "lab-e2e-kueue", "lab-e2e-netpol"
H200_POOL = "lab-h200x1"
POOL_TOLERATION = {"key": "gpurack.io/pool", "operator": "Equal", "value": H200_POOL, "effect": "NoSchedule"}
# Exercises the kueue role's install part alone (the role's other tasks are not needed here).
INSTALL_PLAY = """\
- name: Install Kueue (roles/kueue/tasks/install.yml)
  hosts: kube_control_plane[0]
  gather_facts: false
  vars:
    kueue_webhook_timeout: 300
  tasks:
    - name: Install the manager and wait for its webhook
      ansible.builtin.include_role:
        name: gpurack.bootstrap.kueue
        tasks_from: install
"""


def _wait(what: str, probe: Callable[[], Any], timeout_s: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.5)
    pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}; last: {last!r}")


def _run(path: Path) -> RunResult:
    result = run_playbook(RunRequest(playbook=path, inventory=rack.hosts_file().parent), lab_dir() / "runs")
    assert result.exit_code == ExitCode.OK, (path, result)
    return result


@pytest.fixture
def queue_ns(lab_cluster: LabCluster, capsys: pytest.CaptureFixture[str]) -> Iterator[str]:
    """The session cluster, joined (site run when no earlier test ran it), with the queue
    test's namespace; the namespace and the test's cluster-scoped Kueue objects go after."""
    with _namespace(NS_QUEUE, capsys):
        yield NS_QUEUE
    custom = client.CustomObjectsApi()
    for plural, name in (("clusterqueues", "lab-e2e"), ("resourceflavors", "lab-e2e-h200")):
        try:
            custom.delete_cluster_custom_object(*KUEUE, plural, name)
        except client.ApiException as exc:
            if exc.status != 404:  # not made when the test failed early
                raise


@pytest.fixture
def netpol_ns(lab_cluster: LabCluster, capsys: pytest.CaptureFixture[str]) -> Iterator[str]:
    with _namespace(NS_NETPOL, capsys):
        yield NS_NETPOL


@contextmanager
def _namespace(name: str, capsys: pytest.CaptureFixture[str]) -> Iterator[None]:
    ensure_site(capsys)
    config.load_kube_config(config_file=str(lab_kubernetes.kubeconfig()))
    core = client.CoreV1Api()
    core.create_namespace({"metadata": {"name": name}})
    try:
        yield
    finally:
        core.delete_namespace(name)


def test_kueue_installs_and_admits_a_suspended_job(queue_ns: str, tmp_path: Path) -> None:
    install = tmp_path / "kueue_install.yml"
    install.write_text(INSTALL_PLAY)
    start = time.monotonic()
    _run(install)
    print(f"\nfigure: kueue install (apply) to webhook ready: {time.monotonic() - start:.1f} s")
    assert [h.host for h in _run(install).hosts if h.changed] == [], "a second install must change nothing"
    start = time.monotonic()
    _assert_suspended_job_admitted_and_run_on_its_flavor()
    print(f"figure: suspended job admitted and complete: {time.monotonic() - start:.1f} s")


def test_network_policy_is_enforced_by_the_lab_agent(netpol_ns: str) -> None:
    missing = nft_queue_missing()
    if missing:
        pytest.skip(missing)
    start = time.monotonic()
    _run(playbook("lab_network_policies"))
    _assert_network_policy_enforced()
    print(f"\nfigure: network policy agent + checks: {time.monotonic() - start:.1f} s")


def nft_queue_missing() -> str | None:
    """Why kube-network-policies cannot enforce here, or None: it sends a connection's first
    packet to user space with nftables' `queue` statement, which needs CONFIG_NFT_QUEUE in the
    kernel that the lab's node containers share."""
    config_line = ssh("lab-w1", "zcat /proc/config.gz 2>/dev/null | grep -E '^(# )?CONFIG_NFT_QUEUE[= ]'")
    if config_line.stdout.strip() in {"CONFIG_NFT_QUEUE=y", "CONFIG_NFT_QUEUE=m"}:
        return None
    return (
        "kube-network-policies needs nftables' queue statement, and this kernel "
        f"({ssh('lab-w1', 'uname -r').stdout.strip()}) says {config_line.stdout.strip() or 'nothing'}"
    )


def _assert_suspended_job_admitted_and_run_on_its_flavor() -> None:
    custom, batch, core = client.CustomObjectsApi(), client.BatchV1Api(), client.CoreV1Api()
    group, version = KUEUE
    custom.create_cluster_custom_object(
        group,
        version,
        "resourceflavors",
        {
            "apiVersion": f"{group}/{version}",
            "kind": "ResourceFlavor",
            "metadata": {"name": "lab-e2e-h200"},
            "spec": {"nodeLabels": {"gpurack.io/pool": H200_POOL}, "tolerations": [POOL_TOLERATION]},
        },
    )
    quotas = {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}
    custom.create_cluster_custom_object(
        group,
        version,
        "clusterqueues",
        {
            "apiVersion": f"{group}/{version}",
            "kind": "ClusterQueue",
            "metadata": {"name": "lab-e2e"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": list(quotas),
                        "flavors": [
                            {
                                "name": "lab-e2e-h200",
                                "resources": [{"name": k, "nominalQuota": v} for k, v in quotas.items()],
                            }
                        ],
                    }
                ],
            },
        },
    )
    custom.create_namespaced_custom_object(
        group,
        version,
        NS_QUEUE,
        "localqueues",
        {
            "apiVersion": f"{group}/{version}",
            "kind": "LocalQueue",
            "metadata": {"name": "lab-e2e"},
            "spec": {"clusterQueue": "lab-e2e"},
        },
    )
    batch.create_namespaced_job(NS_QUEUE, _job())
    # Kueue unsuspends the Job once its Workload is admitted to the ClusterQueue.
    workload = _wait("the Job's Workload admitted", lambda: _admitted(custom))
    assert workload["status"]["admission"]["clusterQueue"] == "lab-e2e"
    job = _wait(
        "the Job to complete",
        lambda: (j := batch.read_namespaced_job("gpu-job", NS_QUEUE)).status.succeeded and j,
    )
    assert job.spec.suspend is False
    (pod,) = core.list_namespaced_pod(NS_QUEUE, label_selector="job-name=gpu-job").items
    # The flavor's node labels and toleration, injected into a pod that had neither.
    assert pod.spec.node_name == "lab-w1"
    assert pod.spec.node_selector == {"gpurack.io/pool": H200_POOL}
    injected = [(t.key, t.value, t.effect) for t in pod.spec.tolerations]
    assert ("gpurack.io/pool", H200_POOL, "NoSchedule") in injected


def _admitted(custom: Any) -> dict[str, Any] | None:
    for workload in custom.list_namespaced_custom_object(*KUEUE, NS_QUEUE, "workloads")["items"]:
        conditions = {c["type"]: c["status"] for c in workload.get("status", {}).get("conditions", [])}
        if conditions.get("Admitted") == "True":
            return dict(workload)
    return None


def _job() -> dict[str, Any]:
    """A suspended Job for the lab-e2e queue, one GPU; no toleration of its own."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "gpu-job", "labels": {"kueue.x-k8s.io/queue-name": "lab-e2e"}},
        "spec": {
            "suspend": True,
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": NETCHECK,
                            "imagePullPolicy": "IfNotPresent",
                            "args": ["sleep", "4"],
                            "resources": {
                                "requests": {"cpu": "100m", "memory": "32Mi", "nvidia.com/gpu": "1"},
                                "limits": {"nvidia.com/gpu": "1"},
                            },
                        }
                    ],
                }
            },
        },
    }


def _pod(name: str, node: str, args: list[str], labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {"name": "main", "image": NETCHECK, "imagePullPolicy": "IfNotPresent", "args": args}
            ],
        },
    }


def _connects(core: Any, name: str, server_ip: str, labels: dict[str, str]) -> bool:
    """Whether a client pod on the other worker opens a TCP connection to the server."""
    core.create_namespaced_pod(NS_NETPOL, _pod(name, "lab-w2", ["connect", f"{server_ip}:8080", "5"], labels))
    phase = _wait(
        f"{name} to finish",
        lambda: (
            (p := core.read_namespaced_pod(name, NS_NETPOL).status.phase) in {"Succeeded", "Failed"} and p
        ),
        timeout_s=60,
    )
    return bool(phase == "Succeeded")


def _assert_network_policy_enforced() -> None:
    core, net = client.CoreV1Api(), client.NetworkingV1Api()
    core.create_namespaced_pod(NS_NETPOL, _pod("server", "lab-w1", ["serve", "8080"], {"app": "server"}))
    server_ip = _wait(
        "the server pod running",
        lambda: (
            (p := core.read_namespaced_pod("server", NS_NETPOL)).status.phase == "Running" and p.status.pod_ip
        ),
    )
    net.create_namespaced_network_policy(
        NS_NETPOL,
        {"metadata": {"name": "default-deny"}, "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}},
    )
    assert not _connects(core, "denied", server_ip, {"role": "client"}), "default deny let TCP through"
    net.create_namespaced_network_policy(
        NS_NETPOL,
        {
            "metadata": {"name": "allow-clients"},
            "spec": {
                "podSelector": {"matchLabels": {"app": "server"}},
                "policyTypes": ["Ingress"],
                "ingress": [
                    {
                        "from": [{"podSelector": {"matchLabels": {"role": "client"}}}],
                        "ports": [{"port": 8080}],
                    }
                ],
            },
        },
    )
    assert _connects(core, "allowed", server_ip, {"role": "client"}), "the allow did not let TCP through"
    assert not _connects(core, "stranger", server_ip, {"role": "other"}), "the allow let another pod through"
