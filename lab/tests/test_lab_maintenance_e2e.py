"""Taking nodes out of service and back on the session's lab cluster (playbooks/maintenance.yml,
role node_maintenance, docs/day2.md), through `gpurack run`:

- a Deployment whose PodDisruptionBudget allows no disruption runs on lab-w1: the drain gives up
  after its timeout, lab-w1 stays cordoned, tainted gpurack.io/validating and annotated with the
  budget's refusal, its pod still runs, and lab-w2 is untouched; returning lab-w1 is refused;
- once the budget allows one, a re-run resumes lab-w1 (gpurack's own annotation), drains it; a
  validation lifts the taint, the node returns and the Deployment's pod runs on it again.

What a drain does to a Kueue-managed Job is checked by the rolling patch's test
(test_lab_patch_e2e.py), which drains through the same role.
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


def test_a_budget_holds_the_drain_and_the_node_returns_after_validation(
    cluster: str, namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    client.AppsV1Api().create_namespaced_deployment(NAMESPACE, pinned_workload.deployment(H200_NODE))
    client.PolicyV1Api().create_namespaced_pod_disruption_budget(
        NAMESPACE, pinned_workload.budget(minAvailable=1)
    )
    first = wait(
        "the pinned pod running on lab-w1",
        lambda: pinned_workload.running(NAMESPACE, pinned_workload.SELECTOR, H200_NODE),
    )[0]

    code, held = _run(capsys, cluster, H200_NODE, *QUICK_DRAIN)
    assert code == 1 and held["failed"] == [H200_NODE], held
    node = pinned_workload.node(H200_NODE)
    annotations = node.metadata.annotations
    assert node.spec.unschedulable
    assert annotations["gpurack.io/maintenance"].startswith("by=gpurack reason=patch"), annotations
    assert "disruption budget" in annotations["gpurack.io/maintenance-failed"], annotations
    assert "gpurack.io/validating" in [t.key for t in node.spec.taints]
    assert [
        p.metadata.name for p in pinned_workload.running(NAMESPACE, pinned_workload.SELECTOR, H200_NODE)
    ] == [first.metadata.name]
    untouched = pinned_workload.node(H100_NODE)
    assert not untouched.spec.unschedulable and "gpurack.io/maintenance" not in (
        untouched.metadata.annotations or {}
    )

    code, refused = _run(capsys, cluster, H200_NODE, "-e", "node_maintenance_return=true")
    assert code == 1 and pinned_workload.node(H200_NODE).spec.unschedulable, refused

    # The budget now allows one pod out: the re-run resumes the node gpurack took out, and drains it.
    policy = client.PolicyV1Api()
    policy.delete_namespaced_pod_disruption_budget("pinned", NAMESPACE)
    policy.create_namespaced_pod_disruption_budget(NAMESPACE, pinned_workload.budget(maxUnavailable=1))
    code, drained = _run(capsys, cluster, H200_NODE, *QUICK_DRAIN)
    assert code == 0, drained
    wait(
        "the pinned pod evicted, its replacement waiting",
        lambda: pinned_workload.pending(NAMESPACE, pinned_workload.SELECTOR),
    )

    code, validated = json_run(["run", "validate", "-i", cluster, "--limit", H200_NODE], capsys)
    assert code == 0, validated
    code, returned = _run(capsys, cluster, H200_NODE, "-e", "node_maintenance_return=true")
    assert code == 0, returned
    node = pinned_workload.node(H200_NODE)
    assert not node.spec.unschedulable and "gpurack.io/validating" not in [
        t.key for t in node.spec.taints or []
    ]
    assert not {"gpurack.io/maintenance", "gpurack.io/maintenance-failed"} & set(node.metadata.annotations)
    wait(
        "the workload back on lab-w1",
        lambda: pinned_workload.running(NAMESPACE, pinned_workload.SELECTOR, H200_NODE),
    )
