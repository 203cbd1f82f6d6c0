"""The platform layer end to end on the session's lab cluster (docs/platform.md), two teams.

`gpurack run platform` applies what lab/inventory/group_vars/all/teams.yml says for the teams
alpha and beta: Kueue v0.17.0 as lab/k8s-build made it (installed by roles/kueue, which waits
for its webhook), the queues, and each team's namespace, role, quota, limits and
NetworkPolicies, which kube-network-policies enforces on the lab's bridge CNI
(lab/playbooks/lab_network_policies.yml). Then, through the kubernetes client:

- queueing on the H100 pool (alpha and beta have 4 GPUs each, and may borrow 4): a job within
  quota is admitted and runs on its pool's node with the toleration the flavor injects; a
  second borrows from the cohort; a third waits, and `gpurack queue` says why; a training job
  preempts a batch one;
- tenancy: a member of alpha may not create pods in beta; a pod over the quota, and a
  privileged pod, are refused with the API server's reasons; a pod of alpha cannot open a
  TCP connection to a pod of beta, while a pod of beta can;
- homogeneity: the worker started with an IB port down, in a preflight whose expectations
  do not count ports, is named by `gpurack inventory outliers` against its two peers;
- input and re-runs: an overcommitted inventory is refused before any change, a second run
  changes nothing, a team taken out of the inventory keeps its queue and namespace (named in
  the run) until gpurack_prune_removed_teams deletes them, and `gpurack platform render`
  equals what the cluster holds.

Figures (printed, and in <state>/platform-figures.json): the platform plays' seconds in the
session's first site run, a re-run's, and Kueue's admission latency for 100 queued jobs.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpurack import cli, harvest, project
from gpurack.errors import ExitCode
from gpurack.runner import RunRequest, run_playbook
from gpurack_lab import lab_kubernetes, rack
from gpurack_lab.paths import playbook
from gpurack_lab.state import lab_dir
from inference_checks import assert_inference_service_applied_refused_and_removed
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient
from kueue_jobs import (
    HGX,
    KUEUE,
    NETCHECK,
    admitted_workload,
    gpu_usage,
    job_workload,
    team_job,
    workload_condition,
)
from lab_helpers import RESTRICTED, LabCluster, ensure_site, gone_or_going, json_run, ssh
from lab_helpers import wait as _wait

pytestmark = pytest.mark.kubernetes

# What Pod Security "restricted" asks of every container in a team's namespace.
FIRST_PLATFORM_PLAY = "Build the platform objects from inventory"
LATENCY_JOBS = 100


@pytest.fixture
def cluster(lab_cluster: LabCluster, capsys: pytest.CaptureFixture[str]) -> Iterator[LabCluster]:
    """The session cluster with three workers joined, and a fourth whose IB port is down and
    that never joins (as the Kubernetes end-to-end test leaves it, or, when this test runs
    alone, site first, then the fourth); the jobs this test made are removed after."""
    assert lab_cluster.grow(3) == 0
    ensure_site(capsys)
    assert lab_cluster.grow(4, ("ib-port-down@lab-w4",)) == 0
    config.load_kube_config(config_file=str(lab_kubernetes.kubeconfig()))
    try:
        yield lab_cluster
    finally:
        batch = client.BatchV1Api()
        for team in ("alpha", "beta"):
            batch.delete_collection_namespaced_job(team, propagation_policy="Background")


def test_platform_queues_tenancy_and_inputs(
    cluster: LabCluster, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    inventory = str(rack.hosts_file().parent)
    figures: dict[str, float] = {}
    _assert_overcommit_refused_before_any_change(inventory, capsys)

    # The workers grown after the session's first site run (lab-w4 never joined) get their
    # node exporter here, and a third team, gamma, its objects; the run after that, with gamma
    # taken out of the inventory again, must change nothing and name what gamma left.
    with_gamma = [*_lab_teams(), {"name": "gamma", "groups": ["gamma-users"], "quota": {HGX: {"gpus": 0}}}]
    code, converged = json_run(
        ["run", "platform", "-i", inventory, "-e", json.dumps({"gpurack_teams": with_gamma})], capsys
    )
    assert code == 0, converged
    start = time.monotonic()
    code, again = json_run(["run", "platform", "-i", inventory], capsys)
    figures["platform re-run (s)"] = round(time.monotonic() - start, 1)
    assert code == 0, again
    assert [h for h in again["hosts"] if h["changed"]] == [], again
    _assert_removed_team_kept_then_pruned(inventory, again, capsys)
    first = _first_platform_seconds()
    if first is not None:
        figures["platform plays in the first site run (s)"] = first

    _assert_render_equals_the_cluster(inventory, tmp_path / "render")
    figures.update(assert_inference_service_applied_refused_and_removed(inventory, _lab_teams(), capsys))
    _assert_queueing(inventory, capsys)
    _assert_tenancy()
    _assert_audit_log_records_jobs_and_secret_reads()
    _assert_port_down_worker_flagged(inventory, capsys)
    figures.update(_admission_latency(LATENCY_JOBS))
    (project.state_dir() / "platform-figures.json").write_text(json.dumps(figures, indent=1) + "\n")
    print(f"\nplatform figures: {figures}")


# --- input and re-runs ------------------------------------------------------------------------


def _assert_overcommit_refused_before_any_change(inventory: str, capsys: pytest.CaptureFixture[str]) -> None:
    greedy = [{"name": "greedy", "groups": ["greedy-users"], "quota": {HGX: {"gpus": 64}}}]
    code, refused = json_run(
        ["run", "platform", "-i", inventory, "-e", json.dumps({"gpurack_teams": greedy})], capsys
    )
    assert code == ExitCode.FAILED, refused
    assert [h["host"] for h in refused["hosts"] if h["changed"]] == [], refused
    events = list(harvest.job_events(Path(refused["artifact_dir"])))
    failure = next(e for e in events if e.get("event") == "runner_on_failed")
    message = failure["event_data"]["res"]["msg"]
    assert "greedy" in message and HGX in message, message
    with pytest.raises(ApiException) as missing:
        client.CoreV1Api().read_namespace("greedy")
    assert missing.value.status == 404


def _lab_teams() -> list[dict[str, Any]]:
    teams = yaml.safe_load((rack.hosts_file().parent / "group_vars" / "all" / "teams.yml").read_text())
    return list(teams["gpurack_teams"])


def _assert_removed_team_kept_then_pruned(
    inventory: str, kept_run: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """gamma, out of the inventory, keeps its queue and namespace (the run names them) until
    gpurack_prune_removed_teams deletes them."""
    custom = client.CustomObjectsApi()
    assert custom.get_cluster_custom_object(*KUEUE, "clusterqueues", "gamma")["metadata"]["name"] == "gamma"
    assert client.CoreV1Api().read_namespace("gamma").status.phase == "Active"
    notes = [
        e["event_data"]["res"].get("msg", "")
        for e in harvest.job_events(Path(kept_run["artifact_dir"]))
        if e.get("event") == "runner_on_ok" and "removed teams left" in e["event_data"].get("task", "")
    ]
    assert any("ClusterQueue gamma, Namespace gamma; kept" in note for note in notes), notes
    code, pruned = json_run(
        ["run", "platform", "-i", inventory, "-e", "gpurack_prune_removed_teams=true"], capsys
    )
    assert code == 0, pruned
    # Deleted, or on the way: Kueue's finalizer and a namespace's contents take a moment.
    core = client.CoreV1Api()
    assert gone_or_going(
        lambda: custom.get_cluster_custom_object(*KUEUE, "clusterqueues", "gamma")["metadata"]
    )

    def namespace_metadata() -> dict[str, Any]:
        return dict(core.read_namespace("gamma").metadata.to_dict())

    assert gone_or_going(namespace_metadata)


def _first_platform_seconds() -> float | None:
    """The platform plays' seconds in the session's first run that had them: from their first
    play's start to the next play after them (validate's), read from ansible-runner's events."""
    runs = sorted((project.state_dir() / "runs").glob("*/artifacts"), key=lambda p: p.stat().st_mtime)
    for artifacts in runs:
        plays = [
            (e["event_data"].get("play", ""), datetime.fromisoformat(e["created"]))
            for e in harvest.job_events(artifacts.parent)
            if e.get("event") == "playbook_on_play_start"
        ]
        names = [name for name, _ in plays]
        if FIRST_PLATFORM_PLAY in names and "Metrics" in names:
            start = plays[names.index(FIRST_PLATFORM_PLAY)][1]
            after = names.index("Metrics") + 1
            if after < len(plays):
                return round((plays[after][1] - start).total_seconds(), 1)
    return None


def _run_lab_playbook(name: str) -> None:
    result = run_playbook(
        RunRequest(playbook=playbook(name), inventory=rack.hosts_file().parent), lab_dir() / "runs"
    )
    assert result.exit_code == ExitCode.OK, result


def _contains(live: Any, rendered: Any) -> bool:
    """Whether every field of the rendered object has its value in the live one."""
    if isinstance(rendered, dict):
        return isinstance(live, dict) and all(
            k in live and _contains(live[k], v) for k, v in rendered.items()
        )
    if isinstance(rendered, list):
        return isinstance(live, list) and len(live) == len(rendered) and all(map(_contains, live, rendered))
    return bool(live == rendered)


def _assert_render_equals_the_cluster(inventory: str, out: Path) -> None:
    assert cli.main(["platform", "render", "-i", inventory, "--output", str(out)]) == 0
    api = DynamicClient(client.ApiClient())
    # The GPU Operator is off in the lab (its chart cannot be had), so its namespace is not applied.
    applied = [out / f"{section}.yaml" for section in ("tenancy", "dra", "kueue", "observability")]
    rendered = [o for f in applied for o in yaml.safe_load_all(f.read_text()) if o]
    assert rendered, "render wrote no objects"
    for obj in rendered:
        meta = obj["metadata"]
        resource = api.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        live = resource.get(name=meta["name"], namespace=meta.get("namespace")).to_dict()
        body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
        assert _contains(live, body), f"{obj['kind']} {meta.get('namespace', '')}/{meta['name']} differs"


# --- queueing ---------------------------------------------------------------------------------


def _assert_queueing(inventory: str, capsys: pytest.CaptureFixture[str]) -> None:
    batch, core = client.BatchV1Api(), client.CoreV1Api()
    # Within alpha's nominal 4 GPUs: admitted, and its pod runs on the H100 pool with the
    # flavor's node label and toleration, which the Job did not have.
    batch.create_namespaced_job("alpha", team_job("a1", "alpha", 4, "batch"))
    _wait("a1 admitted", lambda: admitted_workload("alpha", "a1"))
    pod = _wait(
        "a1's pod running",
        lambda: [
            p
            for p in core.list_namespaced_pod("alpha", label_selector="job-name=a1").items
            if p.status.phase == "Running"
        ],
    )[0]
    assert core.read_node(pod.spec.node_name).metadata.labels["gpurack.io/pool"] == HGX
    assert pod.spec.node_selector == {"gpurack.io/pool": HGX}
    assert ("gpurack.io/pool", HGX, "NoSchedule") in [
        (t.key, t.value, t.effect) for t in pod.spec.tolerations
    ]

    # Beyond nominal: borrows beta's idle GPUs from the cohort.
    batch.create_namespaced_job("alpha", team_job("a2", "alpha", 4, "batch"))
    _wait("a2 admitted on borrowed quota", lambda: admitted_workload("alpha", "a2"))
    _wait("alpha's queue to show 8 GPUs in use, 4 of them borrowed", lambda: gpu_usage("alpha") == ("8", "4"))

    # The pool is full: a third waits, and `gpurack queue` names the quota that blocks it.
    batch.create_namespaced_job("alpha", team_job("a3", "alpha", 1, "batch"))
    waiting = _wait(
        "a3 pending with a reason",
        lambda: (
            (c := workload_condition(job_workload("alpha", "a3"), "QuotaReserved"))
            and c["status"] == "False"
            and c
        ),
    )
    assert "nvidia.com/gpu" in waiting["message"], waiting
    capsys.readouterr()
    assert cli.main(["queue", "-i", inventory, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    text = json.dumps(shown)
    assert "a3" in text and "nvidia.com/gpu" in text and HGX in text, shown

    # A training job (priority 1000) preempts a batch one (100) within alpha's queue.
    batch.delete_namespaced_job("a3", "alpha", propagation_policy="Background")
    batch.create_namespaced_job("alpha", team_job("a4", "alpha", 4, "training"))
    _wait("a4 admitted by preemption", lambda: admitted_workload("alpha", "a4"), timeout_s=180)
    evicted = [
        c
        for j in ("a1", "a2")
        if (c := workload_condition(job_workload("alpha", j), "Evicted")) and c["status"] == "True"
    ]
    assert evicted and evicted[0]["reason"] == "Preempted", evicted
    batch.delete_collection_namespaced_job("alpha", propagation_policy="Background")


# --- tenancy ----------------------------------------------------------------------------------


def _may_create_pods(groups: list[str], namespace: str) -> bool:
    review = client.AuthorizationV1Api().create_subject_access_review(
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": "member@example.org",
                "groups": groups,
                "resourceAttributes": {"namespace": namespace, "verb": "create", "resource": "pods"},
            },
        }
    )
    return bool(review.status.allowed)


def _pod(name: str, node: str, args: list[str], **extra: Any) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "main",
        "image": NETCHECK,
        "imagePullPolicy": "IfNotPresent",
        "args": args,
        "securityContext": dict(RESTRICTED),
    }
    container.update(extra)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 0,
            "tolerations": [{"operator": "Exists"}],
            "containers": [container],
        },
    }


def _refusal(namespace: str, pod: dict[str, Any]) -> str:
    with pytest.raises(ApiException) as refused:
        client.CoreV1Api().create_namespaced_pod(namespace, pod)
    assert refused.value.status == 403, refused.value
    return str(refused.value.body)


def _connects(namespace: str, name: str, server_ip: str) -> bool:
    core = client.CoreV1Api()
    core.create_namespaced_pod(namespace, _pod(name, "lab-w2", ["connect", f"{server_ip}:8080", "15"]))
    phase = _wait(
        f"{name} to finish",
        lambda: (
            (p := core.read_namespaced_pod(name, namespace).status.phase) in {"Succeeded", "Failed"} and p
        ),
        timeout_s=90,
    )
    return bool(phase == "Succeeded")


def _assert_tenancy() -> None:
    assert _may_create_pods(["alpha-users"], "alpha")
    assert not _may_create_pods(["alpha-users"], "beta")

    over = _pod("over-quota", "lab-w2", ["sleep", "5"], resources={"limits": {"nvidia.com/gpu": "9"}})
    message = _refusal("alpha", over)
    assert "exceeded quota: gpurack-team" in message and "requests.nvidia.com/gpu" in message, message

    privileged = _pod("privileged", "lab-w2", ["sleep", "5"])
    privileged["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    message = _refusal("alpha", privileged)
    assert "violates PodSecurity" in message and "restricted" in message, message


def test_team_pods_cannot_reach_each_other(cluster: LabCluster) -> None:
    """The teams' NetworkPolicies (default deny, then the namespace itself), enforced by the
    lab's agent: a pod of beta reaches beta's server, a pod of alpha does not."""
    _run_lab_playbook("lab_network_policies")
    core = client.CoreV1Api()
    core.create_namespaced_pod("beta", _pod("server", "lab-w1", ["serve", "8080"]))
    try:
        server_ip = _wait(
            "beta's server running",
            lambda: (
                (p := core.read_namespaced_pod("server", "beta")).status.phase == "Running"
                and p.status.pod_ip
            ),
        )
        assert _connects("beta", "same-team", server_ip), "a pod of beta could not reach beta's server"
        assert not _connects("alpha", "other-team", server_ip), "a pod of alpha reached beta's server"
    finally:
        for namespace, name in (("beta", "server"), ("beta", "same-team"), ("alpha", "other-team")):
            core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)


def _assert_audit_log_records_jobs_and_secret_reads() -> None:
    """The control plane's audit policy (roles/kubeadm_control_plane): a job's submission with
    its body, a Secret's read with who read it and never its data."""
    core = client.CoreV1Api()
    core.create_namespaced_secret(
        "beta", {"metadata": {"name": "audit-probe"}, "stringData": {"token": "s3cr3t-audit"}}
    )
    core.read_namespaced_secret("audit-probe", "beta")
    core.delete_namespaced_secret("audit-probe", "beta")

    def entries() -> list[dict[str, Any]]:
        log = ssh("lab-cp1", """grep -E '"name":"(a1|audit-probe)"' /var/log/kubernetes/audit/audit.log""")
        return [json.loads(line) for line in log.stdout.splitlines() if line.startswith("{")]

    def found() -> tuple[dict[str, Any], dict[str, Any]] | None:
        seen = entries()
        job = [
            e
            for e in seen
            if e.get("verb") == "create"
            and e.get("objectRef", {}).get("resource") == "jobs"
            and e["objectRef"].get("name") == "a1"
            and e.get("stage") == "ResponseComplete"
        ]
        read = [
            e for e in seen if e.get("verb") == "get" and e.get("objectRef", {}).get("name") == "audit-probe"
        ]
        return (job[0], read[0]) if job and read else None

    job, read = _wait("the audit log's job and secret entries", found, timeout_s=60)
    assert job["level"] == "RequestResponse" and job["requestObject"]["metadata"]["name"] == "a1", job
    assert read["level"] == "Metadata" and read["user"]["username"], read
    log = ssh("lab-cp1", "grep -c s3cr3t-audit /var/log/kubernetes/audit/audit.log")
    assert log.stdout.strip() == "0", "a Secret's data reached the audit log"


# --- homogeneity ------------------------------------------------------------------------------


def _assert_port_down_worker_flagged(inventory: str, capsys: pytest.CaptureFixture[str]) -> None:
    """lab-w4's first IB port is down. The expectations do not count ports: its preflight fails
    only on the down port's own state, and the inventory flags its count of active ports (one
    fewer) against lab-w2 and lab-w3, its pool's majority, which no expectation pins."""
    expect = {"gpurack_expect": {"gpu": {"count": 8}}}
    code, result = json_run(
        ["run", "preflight", "-i", inventory, "-l", "lab-w2,lab-w3,lab-w4", "-e", json.dumps(expect)], capsys
    )
    assert code == ExitCode.FAILED, result
    assert [h["host"] for h in result["hosts"] if h["failed"]] == ["lab-w4"], result
    code, found = json_run(["inventory", "outliers", "--pool", HGX], capsys)
    assert code == ExitCode.FAILED, found
    (pool,) = found["pools"]
    flagged = {(o["host"], o["attribute"]): o for o in pool["outliers"]}
    assert {host for host, _ in flagged} == {"lab-w4"}, pool
    ports = next(o for (_, attribute), o in flagged.items() if "port" in attribute)
    # One port fewer than each of its two peers (the HGX capture's active ports, IB and Ethernet).
    assert int(ports["value"]) == int(ports["majority"]) - 1 and ports["peers_with_majority"] == 2, ports


# --- figures ----------------------------------------------------------------------------------


def _admission_latency(count: int) -> dict[str, float]:
    """Seconds from creating each of `count` queued jobs to its Workload's Admitted condition,
    seen by polling; the jobs' pods select a label no node has, so nothing runs."""
    batch, custom = client.BatchV1Api(), client.CustomObjectsApi()
    created: dict[str, float] = {}
    for i in range(count):
        name = f"latency-{i:03d}"
        batch.create_namespaced_job("beta", team_job(name, "beta", 0, "batch", {"gpurack.io/bench": "none"}))
        created[name] = time.monotonic()
    admitted: dict[str, float] = {}

    def all_admitted() -> bool:
        now = time.monotonic()
        for workload in custom.list_namespaced_custom_object(*KUEUE, "beta", "workloads")["items"]:
            owner = next((o["name"] for o in workload["metadata"].get("ownerReferences", [])), "")
            state = workload_condition(workload, "Admitted")
            if owner in created and owner not in admitted and state and state["status"] == "True":
                admitted[owner] = now
        return len(admitted) == count

    _wait(f"{count} jobs admitted", all_admitted, timeout_s=300, every_s=0.2)
    latencies = sorted(admitted[n] - created[n] for n in created)
    batch.delete_collection_namespaced_job("beta", propagation_policy="Background")
    return {
        f"admission p50, {count} jobs (s)": round(statistics.median(latencies), 2),
        f"admission p95, {count} jobs (s)": round(latencies[int(0.95 * (count - 1))], 2),
    }
