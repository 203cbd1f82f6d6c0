"""Taking a node out of service and back on the session's lab cluster (playbooks/maintenance.yml,
role node_maintenance, docs/day2.md), through `gpurack run`: lab-w2 is checked, cordoned with
gpurack's annotation (who, why), drained (its pinned pod evicted, the replacement waiting), and
returned (uncordoned, the annotations gone, the pod back), while lab-w1 is untouched.

The same role's hold (a PodDisruptionBudget that refuses the drain, the node kept out with the
validating taint and the reason), resume, refused return and drain of a Kueue-managed Job are
checked by the rolling patch's test (test_lab_patch_e2e.py), which drains through it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pinned_workload
import pytest
from gpurack_lab import lab_kubernetes, rack
from kubernetes import client, config
from lab_helpers import LabCluster, ensure_site, json_run, wait

pytestmark = pytest.mark.kubernetes

NAMESPACE = "maintenance-e2e"
H200_NODE, H100_NODE = "lab-w1", "lab-w2"
QUICK_DRAIN = ["-e", "node_maintenance_drain_timeout=20", "-e", "node_maintenance_drain_retry_delay=5"]


@pytest.fixture
def cluster(lab_cluster: LabCluster, capsys: pytest.CaptureFixture[str]) -> Iterator[str]:
    """The session cluster with site applied; its inventory folder. Afterwards every worker the
    test left out of service is validated and returned, so the tests after it find them as site
    left them."""
    ensure_site(capsys)
    config.load_kube_config(config_file=str(lab_kubernetes.kubeconfig()))
    inventory = str(rack.hosts_file().parent)
    try:
        yield inventory
    finally:
        for found in client.CoreV1Api().list_node().items:
            node = found.metadata.name
            if "gpurack.io/maintenance" in (found.metadata.annotations or {}):
                json_run(["run", "validate", "-i", inventory, "--limit", node], capsys)
                _run(capsys, inventory, node, "-e", "node_maintenance_return=true")


@pytest.fixture
def namespace(cluster: str) -> Iterator[str]:
    """A namespace of the test's own on the session cluster, removed after it."""
    core = client.CoreV1Api()
    core.create_namespace({"metadata": {"name": NAMESPACE}})
    try:
        yield NAMESPACE
    finally:
        core.delete_namespace(NAMESPACE)


def _run(
    capsys: pytest.CaptureFixture[str], inventory: str, node: str, *extra: str
) -> tuple[int, dict[str, Any]]:
    return json_run(["run", "maintenance", "-i", inventory, "--limit", node, *extra], capsys)


def test_a_node_goes_out_for_maintenance_and_comes_back(
    cluster: str, namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    client.AppsV1Api().create_namespaced_deployment(NAMESPACE, pinned_workload.deployment(H100_NODE))
    first = wait(
        "the pinned pod running on lab-w2",
        lambda: pinned_workload.running(NAMESPACE, pinned_workload.SELECTOR, H100_NODE),
    )[0]

    code, out = _run(capsys, cluster, H100_NODE, *QUICK_DRAIN, "-e", "node_maintenance_reason=rma")
    assert code == 0, out
    node = pinned_workload.node(H100_NODE)
    annotations = node.metadata.annotations
    assert node.spec.unschedulable
    assert annotations["gpurack.io/maintenance"].startswith("by=gpurack reason=rma"), annotations
    assert "gpurack.io/maintenance-failed" not in annotations, annotations
    assert "gpurack.io/validating" not in [t.key for t in node.spec.taints or []]
    replacement = wait(
        "the pinned pod evicted, its replacement waiting",
        lambda: pinned_workload.pending(NAMESPACE, pinned_workload.SELECTOR),
    )[0]
    assert replacement.metadata.name != first.metadata.name
    untouched = pinned_workload.node(H200_NODE)
    assert not untouched.spec.unschedulable
    assert "gpurack.io/maintenance" not in (untouched.metadata.annotations or {})

    # Its validation never failed, so it may return at once.
    code, returned = _run(capsys, cluster, H100_NODE, "-e", "node_maintenance_return=true")
    assert code == 0, returned
    node = pinned_workload.node(H100_NODE)
    assert not node.spec.unschedulable
    assert not {"gpurack.io/maintenance", "gpurack.io/maintenance-failed"} & set(node.metadata.annotations)
    wait(
        "the workload back on lab-w2",
        lambda: pinned_workload.running(NAMESPACE, pinned_workload.SELECTOR, H100_NODE),
    )
