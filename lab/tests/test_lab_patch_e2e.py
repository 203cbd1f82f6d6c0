"""The rolling patch on the session's lab cluster (playbooks/patch.yml, roles node_update and
node_maintenance, docs/day2.md), through `gpurack run patch`, with AWX-style string extra vars.

The lab's workers run the host-managed stand-in driver 580.95.05 (lab/gpurack_lab/driver); the
patch updates it to 580.105.08 with the kernel metapackages in one apt transaction, and a
reboot restarts the worker's container. One scenario, in order:

1. a Deployment whose PodDisruptionBudget allows no disruption runs on lab-w1, the first node of
   the batches: the drain times out, lab-w1 stays cordoned with the budget's refusal and the
   validating taint, the batch fails, and lab-w2 is untouched (not cordoned, not updated, not
   rebooted);
2. the budget allows one, but the validation will fail (an expectation lab-w1 cannot meet): the
   re-run resumes lab-w1, drains, updates and reboots it, and it stays cordoned and tainted;
3. a plain re-run resumes lab-w1 (no update left, no second reboot), validates and returns it,
   and the workload comes back to it; then a Kueue-managed Job runs on an H100 node, and the
   patch drains, updates, reboots, validates and returns that node: the new driver shows in the
   inventory, the packages are held again, the Job completes and alpha's queue holds no GPU;
4. a second run with nothing to do changes nothing and reboots nothing.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pinned_workload
import pytest
from gpurack.harvest import job_events, patch_outcomes
from gpurack.inventory import PatchRecord
from gpurack_lab import lab_kubernetes, rack
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kueue_jobs import admitted_workload, gpu_usage, job_workload, team_job, workload_condition
from lab_helpers import LabCluster, ensure_site, json_run, ssh, wait

pytestmark = pytest.mark.kubernetes

NAMESPACE = "patch-e2e"
FIRST = "lab-w1"  # pool lab-h200x1: first of the batches (pools by name)
OLD, NEW = "580.95.05", "580.105.08"
# As AWX passes survey answers: strings.
PATCH = [
    "-e", f"nvidia_driver_version={NEW}", "-e", "node_update_allow_reboot=true",
    "-e", "node_maintenance_serial=1", "-e", "node_maintenance_max_fail_percentage=0",
    "-e", "node_maintenance_drain_timeout=15", "-e", "node_maintenance_drain_retry_delay=5",
]  # fmt: skip
UNMEETABLE = '{"gpurack_expect": {"gpu": {"count": 2}}}'


@pytest.fixture
def cluster(lab_cluster: LabCluster, capsys: pytest.CaptureFixture[str]) -> Iterator[str]:
    """The session cluster with site applied; its inventory folder. Afterwards every worker the
    test left out of service is validated and returned (the drivers stay at the new version)."""
    ensure_site(capsys)
    config.load_kube_config(config_file=str(lab_kubernetes.kubeconfig()))
    inventory = str(rack.hosts_file().parent)
    core = client.CoreV1Api()
    core.create_namespace({"metadata": {"name": NAMESPACE}})
    try:
        yield inventory
    finally:
        core.delete_namespace(NAMESPACE)
        client.BatchV1Api().delete_collection_namespaced_job("alpha", propagation_policy="Background")
        for found in core.list_node().items:
            node = found.metadata.name
            if "gpurack.io/maintenance" in (found.metadata.annotations or {}):
                json_run(["run", "validate", "-i", inventory, "--limit", node], capsys)
                json_run(
                    [
                        "run",
                        "maintenance",
                        "-i",
                        inventory,
                        "--limit",
                        node,
                        "-e",
                        "node_maintenance_return=true",
                    ],
                    capsys,
                )


def _patch(
    capsys: pytest.CaptureFixture[str], inventory: str, nodes: str, *extra: str
) -> tuple[int, dict[str, Any]]:
    return json_run(["run", "patch", "-i", inventory, "--limit", nodes, *PATCH, *extra], capsys)


def _outcomes(result: dict[str, Any]) -> dict[str, PatchRecord]:
    """Each host's last gpurack_patch fact in the run's events, as `gpurack run` records it."""
    return {p.host: p for p in patch_outcomes(Path(result["artifact_dir"]))}


def _task_results(result: dict[str, Any], host: str, task: str) -> list[str]:
    """How each run of `task` on `host` ended in the run's events (ok, failed, skipped)."""
    ends = {"runner_on_ok": "ok", "runner_on_failed": "failed", "runner_on_skipped": "skipped"}
    return [
        ends[event["event"]]
        for event in job_events(Path(result["artifact_dir"]))
        if event.get("event") in ends
        and (event.get("event_data") or {}).get("host") == host
        and (event.get("event_data") or {}).get("task") == task
    ]


def _taints(name: str) -> list[str]:
    return [t.key for t in pinned_workload.node(name).spec.taints or []]


def _restarts(name: str) -> int:
    done = subprocess.run(
        ["docker", "inspect", "--format", "{{.RestartCount}}", name],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def _loaded_driver(name: str) -> str:
    return ssh(name, "cat /run/gpurack-lab/nvidia/version").stdout.strip()


def test_the_rolling_patch_holds_resumes_validates_and_keeps_kueue_jobs(
    cluster: str, capsys: pytest.CaptureFixture[str]
) -> None:
    client.AppsV1Api().create_namespaced_deployment(NAMESPACE, pinned_workload.deployment(FIRST))
    client.PolicyV1Api().create_namespaced_pod_disruption_budget(
        NAMESPACE, pinned_workload.budget(minAvailable=1)
    )
    wait(
        "the pinned pod running on lab-w1",
        lambda: pinned_workload.running(NAMESPACE, pinned_workload.SELECTOR, FIRST),
    )
    assert {_loaded_driver(n) for n in (FIRST, "lab-w2")} == {OLD}
    _a_budget_holds_the_first_batch(capsys, cluster)
    _a_failed_validation_keeps_the_node_out(capsys, cluster)
    job_node = _the_patch_returns_nodes_and_keeps_a_kueue_job(capsys, cluster)
    _nothing_to_do_changes_nothing(capsys, cluster, f"{FIRST},{job_node}")


def _a_budget_holds_the_first_batch(capsys: pytest.CaptureFixture[str], cluster: str) -> None:
    """1. The budget holds lab-w1's drain: the batch fails, lab-w2 is never started."""
    other = "lab-w2"
    before = {n: _restarts(n) for n in (FIRST, other)}
    code, held = _patch(capsys, cluster, f"{FIRST},{other}")
    assert code == 1 and held["failed"] == [FIRST], held
    outcome = _outcomes(held)
    assert set(outcome) == {FIRST} and outcome[FIRST].outcome == "held", outcome
    assert "disruption budget" in (outcome[FIRST].reason or ""), outcome
    node = pinned_workload.node(FIRST)
    assert node.spec.unschedulable and "gpurack.io/validating" in _taints(FIRST)
    assert "disruption budget" in node.metadata.annotations["gpurack.io/maintenance-failed"]
    assert _loaded_driver(FIRST) == OLD and _restarts(FIRST) == before[FIRST]
    untouched = pinned_workload.node(other)
    assert not untouched.spec.unschedulable
    assert "gpurack.io/maintenance" not in (untouched.metadata.annotations or {})
    assert _loaded_driver(other) == OLD and _restarts(other) == before[other]


def _a_failed_validation_keeps_the_node_out(capsys: pytest.CaptureFixture[str], cluster: str) -> None:
    """2. The budget allows one; lab-w1 is resumed, updated and rebooted, and fails validation."""
    policy = client.PolicyV1Api()
    policy.delete_namespaced_pod_disruption_budget("pinned", NAMESPACE)
    policy.create_namespaced_pod_disruption_budget(NAMESPACE, pinned_workload.budget(maxUnavailable=1))
    restarts = _restarts(FIRST)
    code, failed = _patch(capsys, cluster, FIRST, "-e", UNMEETABLE)
    assert code == 1, failed
    outcome = _outcomes(failed)[FIRST]
    assert outcome.outcome == "held" and outcome.rebooted and outcome.driver_after == NEW, outcome
    assert outcome.validation == "fail" and "gpu" in (outcome.reason or "").lower(), outcome
    assert _restarts(FIRST) == restarts + 1 and _loaded_driver(FIRST) == NEW
    assert pinned_workload.node(FIRST).spec.unschedulable and "gpurack.io/validating" in _taints(FIRST)
    # Nor may maintenance.yml return it while its validation has not passed.
    code, refused = json_run(
        ["run", "maintenance", "-i", cluster, "--limit", FIRST, "-e", "node_maintenance_return=true"], capsys
    )
    assert code == 1 and pinned_workload.node(FIRST).spec.unschedulable, refused


def _the_patch_returns_nodes_and_keeps_a_kueue_job(capsys: pytest.CaptureFixture[str], cluster: str) -> str:
    """3. A plain re-run returns lab-w1 (no update left, no second reboot); then a Kueue job runs
    on an H100 node, and the patch of that node keeps it."""
    restarts = _restarts(FIRST)
    code, returned = _patch(capsys, cluster, FIRST)
    assert code == 0, returned
    outcome = _outcomes(returned)[FIRST]
    assert outcome.outcome == "patched" and not outcome.rebooted, outcome
    assert outcome.validation in ("pass", "warn") and _restarts(FIRST) == restarts, outcome
    wait(
        "the workload back on lab-w1",
        lambda: pinned_workload.running(NAMESPACE, pinned_workload.SELECTOR, FIRST),
    )

    batch = client.BatchV1Api()
    batch.create_namespaced_job(
        "alpha", team_job("patched", "alpha", 1, "batch", sleep_s=45, backoff_limit=2)
    )
    wait("the job admitted", lambda: admitted_workload("alpha", "patched"))
    job_node = wait(
        "its pod running", lambda: pinned_workload.running("alpha", "job-name=patched"), timeout_s=120
    )[0].spec.node_name
    restarts = _restarts(job_node)
    # The GPU half of the gate runs on the node (the lab's replayed nvidia-smi stands in for the
    # standard tier, which needs real GPUs).
    code, patched = _patch(
        capsys, cluster, job_node, "-e", "node_update_gpu_validation_command=nvidia-smi -q"
    )
    assert code == 0, patched
    assert _task_results(patched, job_node, "Run the GPU validation on the node") == ["ok"], patched
    done = _outcomes(patched)[job_node]
    assert done.outcome == "patched" and done.rebooted, done
    assert (done.driver_before, done.driver_after) == (OLD, NEW), done
    assert all((getattr(done, s) or 0) > 0 for s in ("drain_s", "update_s", "reboot_s", "validation_s")), done
    assert _restarts(job_node) == restarts + 1
    for name in (FIRST, job_node):
        node = pinned_workload.node(name)
        assert not node.spec.unschedulable and "gpurack.io/validating" not in _taints(name), name
        assert not {"gpurack.io/maintenance", "gpurack.io/maintenance-failed"} & set(
            node.metadata.annotations
        )
        code, shown = json_run(["inventory", "show", name], capsys)
        assert code == 0 and shown["facts"]["gpurack_gpu"]["driver_version"] == NEW, shown
    held_packages = ssh(job_node, "apt-mark showhold").stdout.split()
    assert {"nvidia-kernel-open-dkms", "nvidia-driver-cuda"} <= set(held_packages), held_packages

    # Kueue kept the Job's Workload admitted through the drain; the Job completes.
    evicted = workload_condition(job_workload("alpha", "patched"), "Evicted")
    assert not (evicted and evicted["status"] == "True"), evicted
    finished = wait(
        "the job complete",
        lambda: (j := batch.read_namespaced_job("patched", "alpha")).status.succeeded == 1 and j,
        timeout_s=240,
    )
    assert finished.status.failed == 1, finished.status  # the evicted pod counts against its backoffLimit
    wait(
        "Kueue to finish the workload",
        lambda: workload_condition(job_workload("alpha", "patched"), "Finished"),
    )
    wait("alpha's queue to hold no GPU", lambda: gpu_usage("alpha") in (None, ("0", "0")))
    try:
        batch.delete_namespaced_job("patched", "alpha", propagation_policy="Background")
    except ApiException as exc:  # already gone is fine
        assert exc.status == 404
    return job_node


def _nothing_to_do_changes_nothing(capsys: pytest.CaptureFixture[str], cluster: str, nodes: str) -> None:
    """4. A second run with nothing to do: nothing changes, nothing reboots."""
    restarts = {n: _restarts(n) for n in nodes.split(",")}
    code, again = _patch(capsys, cluster, nodes)
    assert code == 0, again
    assert [h["host"] for h in again["hosts"] if h["changed"]] == [], again
    assert {o.outcome for o in _outcomes(again).values()} == {"unchanged"}, _outcomes(again)
    assert {n: _restarts(n) for n in restarts} == restarts
