"""The lab's object store end to end on the session's lab cluster (docs/lab.md, "The object store").

`gpurack run site` (or an earlier test's) has run roles/object_store: versitygw v1.8.0 as
lab/k8s-build built it runs in gpurack-object-store on the control plane, and each team of
lab/inventory/group_vars/all/teams.yml has an account, a bucket named after it with the
acceptance dataset sample and base weights, and the Secret gpurack-object-store. Then:

- each bucket holds the uploaded objects, byte for byte (from the controller, with the team's
  own credentials read back from its Secret), and another team's credentials cannot read it;
- a pod of alpha, with the Secret as its environment (envFrom), reads its bucket (s3probe);
- a pod of a namespace that no NetworkPolicy lets through cannot even connect (bounded);
- a second run of the role changes nothing.

Figures (printed): the test's own seconds, and the role's re-run.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.object_store import s3 as _s3
from gpurack.errors import ExitCode
from gpurack.runner import RunRequest, run_playbook
from gpurack_lab import lab_kubernetes, rack
from gpurack_lab.paths import playbook
from gpurack_lab.state import GATEWAY, lab_dir, load
from kubernetes import client, config
from lab_helpers import RESTRICTED, LabCluster, ensure_site, json_run
from lab_helpers import wait as _wait

pytestmark = pytest.mark.kubernetes

S3PROBE = "registry.gpurack.lab/s3probe:v1"
SECRET = "gpurack-object-store"
TEAMS = ("alpha", "beta")
ASSETS = Path.home() / ".cache" / "gpurack" / "acceptance"
DATASET_KEY = "datasets/vader/vader_lexicon.txt"
OUTSIDER = "gpurack-outsider"


def _secret(team: str) -> dict[str, str]:
    data = client.CoreV1Api().read_namespaced_secret(SECRET, team).data
    return {k: base64.b64decode(v).decode() for k, v in data.items()}


def _controller_client(env: dict[str, str]) -> _s3.Client:
    """The team's credentials, against the NodePort the controller uses (the pods' URL is in-cluster)."""
    endpoint = f"http://{_control_plane_ip()}:30070"
    return _s3.Client(endpoint, env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"], env["AWS_REGION"])


def _control_plane_ip() -> str:
    state = load(rack.state_file())
    assert state is not None
    return next(h.ip for h in state.hosts if h.role == "control_plane")


def _pod(name: str, env_from: str | None, env: dict[str, str] | None, args: list[str]) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "main",
        "image": S3PROBE,
        "imagePullPolicy": "IfNotPresent",
        "args": args,
        "securityContext": dict(RESTRICTED),
        "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}},
    }
    if env_from:
        container["envFrom"] = [{"secretRef": {"name": env_from}}]
    if env:
        container["env"] = [{"name": k, "value": v} for k, v in env.items()]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeName": "lab-w2",
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 0,
            "automountServiceAccountToken": False,
            "tolerations": [{"operator": "Exists"}],
            "containers": [container],
        },
    }


def _run_pod(namespace: str, pod: dict[str, Any]) -> tuple[int, str]:
    """Run a pod to its end: its exit code and its log."""
    core = client.CoreV1Api()
    name = pod["metadata"]["name"]
    core.create_namespaced_pod(namespace, pod)
    try:
        status = _wait(
            f"pod {namespace}/{name} to finish",
            lambda: (
                (s := core.read_namespaced_pod(name, namespace).status).phase in {"Succeeded", "Failed"} and s
            ),
            timeout_s=60,
            every_s=1,
        )
        code = status.container_statuses[0].state.terminated.exit_code
        return code, core.read_namespaced_pod_log(name, namespace)
    finally:
        core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)


@pytest.fixture
def cluster(lab_cluster: LabCluster, capsys: pytest.CaptureFixture[str]) -> LabCluster:
    """The session cluster, joined, with the platform (and so the store) and the NetworkPolicy agent."""
    ensure_site(capsys)
    result = run_playbook(
        RunRequest(playbook=playbook("lab_network_policies"), inventory=rack.hosts_file().parent),
        lab_dir() / "runs",
    )
    assert result.exit_code == ExitCode.OK, result
    config.load_kube_config(config_file=str(lab_kubernetes.kubeconfig()))
    return lab_cluster


def test_object_store_buckets_credentials_and_network_policy(
    cluster: LabCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    start = time.monotonic()
    local = hashlib.sha256((ASSETS / "dataset" / "vader_lexicon.txt").read_bytes()).hexdigest()
    model = sorted(
        p for p in (ASSETS / "model" / "all-MiniLM-L6-v2").rglob("*") if p.is_file() and "/." not in str(p)
    )

    # Each bucket, with the team's own credentials: every uploaded object, of the local size.
    envs = {team: _secret(team) for team in TEAMS}
    for team, env in envs.items():
        assert set(env) >= {"AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"}
        assert env["AWS_ENDPOINT_URL"] == "http://versitygw.gpurack-object-store.svc.cluster.local:7070"
        assert env["AWS_ACCESS_KEY_ID"] == f"gpurack-{team}"
        store = _controller_client(env)
        head = store.head_object(team, DATASET_KEY)
        assert head is not None and head["content-length"] == str(
            (ASSETS / "dataset" / "vader_lexicon.txt").stat().st_size
        )
        for path in model:
            key = "models/all-MiniLM-L6-v2/" + str(path.relative_to(ASSETS / "model" / "all-MiniLM-L6-v2"))
            head = store.head_object(team, key)
            assert head is not None and head["content-length"] == str(path.stat().st_size), key
    # An account sees only its own bucket.
    with pytest.raises(_s3.S3Error) as refused:
        _controller_client(envs["beta"]).head_object("alpha", DATASET_KEY)
    assert refused.value.status == 403

    # A pod of alpha, with alpha's Secret as its environment, reads alpha's bucket.
    code, log = _run_pod("alpha", _pod("s3-read", SECRET, None, ["get", "alpha", DATASET_KEY, "20"]))
    assert code == 0, log
    assert f"sha256 {local}" in log, log

    # A namespace without the store's egress (and not admitted by its ingress) cannot connect,
    # even with valid credentials: the probe gives up after 6 s.
    core = client.CoreV1Api()
    labels = {f"pod-security.kubernetes.io/{m}": "restricted" for m in ("enforce", "warn")}
    core.create_namespace({"metadata": {"name": OUTSIDER, "labels": labels}})
    try:
        began = time.monotonic()
        code, log = _run_pod(
            OUTSIDER, _pod("s3-denied", None, envs["alpha"], ["get", "alpha", DATASET_KEY, "6"])
        )
        assert code == 2, log
        assert "no connection" in log, log
        assert time.monotonic() - began < 45
    finally:
        core.delete_namespace(OUTSIDER, grace_period_seconds=0)

    # The role again: nothing changes.
    rerun = time.monotonic()
    code, again = json_run(
        ["run", "platform", "-i", str(rack.hosts_file().parent), "--tags", "object_store"], capsys
    )
    rerun_s = round(time.monotonic() - rerun, 1)
    assert code == 0, again
    assert [h for h in again["hosts"] if h["changed"]] == [], again
    figures = {
        "object store test (s)": round(time.monotonic() - start, 1),
        "object_store re-run (s)": rerun_s,
    }
    print(f"\nobject store figures: {json.dumps(figures)}")
    assert GATEWAY == "172.30.42.1", "lab_object_store_controller_cidrs admits the lab network's gateway"
