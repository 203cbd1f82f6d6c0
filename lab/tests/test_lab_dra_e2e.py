"""DRA end to end on the session's lab cluster (docs/dra.md): the H100 pool hands out its GPUs
through DRA (lab/inventory: allocation dra, gpurack_dra_driver gpu.example.com), the site run
applied its DeviceClass and the teams' ResourceClaimTemplates (the tenancy role's dra section),
and lab/playbooks/lab_dra.yml runs the upstream example driver's kubelet plugin on the pool's
nodes. A pod of alpha that claims one GPU from the pool's template gets a ResourceClaim
allocated by the scheduler from the driver's ResourceSlice of its node, runs, and its process
holds the environment the driver's CDI spec gave it (GPU_DEVICE_<n>=gpu-<n>): read from
/proc/<pid>/environ on the node, since the test image has no shell.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from gpurack_lab import lab_kubernetes
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kueue_jobs import HGX, NETCHECK
from lab_helpers import RESTRICTED, LabCluster, ensure_dra_driver, ensure_site, ssh
from lab_helpers import wait as _wait

pytestmark = pytest.mark.kubernetes

TEAM = "alpha"
POD = "dra-claim"
DRIVER = "gpu.example.com"
TEMPLATE = f"{HGX}-gpu"  # plugins/module_utils/platform/dra.py: claim_template_name


@pytest.fixture
def cluster(lab_cluster: LabCluster, capsys: pytest.CaptureFixture[str]) -> Iterator[LabCluster]:
    """The session cluster with the site applied and the example DRA driver on the H100 pool."""
    assert lab_cluster.grow(2) == 0
    ensure_site(capsys)
    ensure_dra_driver()
    config.load_kube_config(config_file=str(lab_kubernetes.kubeconfig()))
    try:
        yield lab_cluster
    finally:
        try:
            client.CoreV1Api().delete_namespaced_pod(POD, TEAM, grace_period_seconds=0)
        except ApiException as exc:
            if exc.status != 404:  # never created: the test's own failure says why
                raise


def _claiming_pod() -> dict[str, Any]:
    container = {
        "name": "main",
        "image": NETCHECK,
        "imagePullPolicy": "IfNotPresent",
        "args": ["sleep", "120"],
        "securityContext": dict(RESTRICTED),
        "resources": {"claims": [{"name": "gpu"}]},
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": POD},
        "spec": {
            # A bare pod: Kueue's flavor would put a queued one on the pool; this one says so itself.
            "nodeSelector": {"gpurack.io/pool": HGX},
            "tolerations": [
                {"key": "gpurack.io/pool", "operator": "Equal", "value": HGX, "effect": "NoSchedule"}
            ],
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 0,
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": TEMPLATE}],
            "containers": [container],
        },
    }


def _environment(node: str, pod_uid: str) -> dict[str, str]:
    """The container's process environment on its node (crictl finds the process)."""
    script = (
        f"set -e; p=$(crictl pods -q --label io.kubernetes.pod.uid={pod_uid}); "
        'c=$(crictl ps -q --pod "$p" --name main); '
        "pid=$(crictl inspect -o go-template --template '{{.info.pid}}' \"$c\"); "
        'tr "\\0" "\\n" < "/proc/$pid/environ"'
    )
    done = ssh(node, script, timeout_s=30)
    assert done.returncode == 0, done.stderr
    return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)


def test_dra_claim_is_allocated_and_the_pod_sees_its_device(cluster: LabCluster) -> None:
    core = client.CoreV1Api()
    core.create_namespaced_pod(TEAM, _claiming_pod())
    pod = _wait(
        "the claiming pod running",
        lambda: (p := core.read_namespaced_pod(POD, TEAM)).status.phase == "Running" and p,
        timeout_s=90,
        every_s=1,
    )
    (status,) = pod.status.resource_claim_statuses
    assert status.name == "gpu" and status.resource_claim_name, status
    claim = client.CustomObjectsApi().get_namespaced_custom_object(
        "resource.k8s.io", "v1", TEAM, "resourceclaims", status.resource_claim_name
    )
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    assert (result["driver"], result["pool"], result["request"]) == (DRIVER, pod.spec.node_name, "gpu"), (
        result
    )
    assert core.read_node(pod.spec.node_name).metadata.labels["gpurack.io/pool"] == HGX
    assert [r["uid"] for r in claim["status"]["reservedFor"]] == [pod.metadata.uid]

    device = result["device"]  # gpu-<n>
    env = _environment(pod.spec.node_name, pod.metadata.uid)
    assert env.get(f"GPU_DEVICE_{device.removeprefix('gpu-')}") == device, env
    assert env.get("DRA_RESOURCE_DRIVER_NAME") == DRIVER, env
