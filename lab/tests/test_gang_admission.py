"""The gang tests of issue 30 on the scale plane: Kueue's topology-aware, all-or-nothing admission
of the acceptance job's template, against the site's Kueue objects as gpurack renders them.

kwok Nodes stand in for GPU servers (only the scheduler and Kueue are tested): 4 Nodes of 8 GPUs,
2 per leaf, one spine, their labels derived by the real code from the HGX H100 capture. There is
no kubelet: kwok fakes each bound pod Running and Ready. The plane runs the Job, service account
and garbage collector controllers, kube-scheduler and Kueue (with the product's waitForPodsReady;
no webhooks, so Jobs are created suspended, as the acceptance job is).
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance import JobSpec, job_objects
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.job import RUN_LABEL
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels import LEAF_KEY, TOPOLOGY_LEVELS
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node import KubeClient, core_v1
from gpurack_lab.lab_kubernetes import build_dir
from gpurack_lab.scale_plane import ScalePlane, scale_plane
from kubernetes import client
from kueue_jobs import job_workload, workload_condition
from lab_helpers import wait

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
NEEDED = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kueue", "kubectl")
MISSING = [n for n in NEEDED if not (build_dir() / "bin" / n).is_file()]
pytestmark = [
    pytest.mark.scale_plane,
    pytest.mark.skipif(
        bool(MISSING),
        reason=f"the offline build lacks {', '.join(MISSING)} (`make lab-k8s`, `build.sh --only kwok`)",
    ),
]
TEAM = "gang"
NODES, PER_LEAF, GPUS = 4, 2, 8
HOSTNAME_KEY = TOPOLOGY_LEVELS[-1]  # the finest level: where Kueue puts each pod


def _bench(name: str) -> ModuleType:
    """A benchmark module (they import each other by name): fake Nodes and Kueue objects have one home."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    return importlib.import_module(name)


def _place(index: int) -> tuple[dict[str, Any], str, str]:
    """Node `index` in the lab's training pool, 2 Nodes a leaf (rack), one spine (block)."""
    return _bench("bench_kwok").POOLS[0], f"lab-rack{index // PER_LEAF + 1}", "lab-block1"


def _team(pools: list[dict[str, Any]], gpus: dict[str, int]) -> dict[str, Any]:
    """One team with the whole fleet's GPUs as quota (CPU and memory enough for 8 pods), TAS on."""
    pool = pools[0]["name"]
    quota = {pool: {"gpus": gpus[pool], "cpu": "8", "memory": "8Gi"}}
    return {"gpurack_teams": [{"name": TEAM, "groups": [f"{TEAM}-users"], "quota": quota}],
            "gpurack_kueue_topology": True}  # fmt: skip


@dataclass(frozen=True)
class Site:
    """The running plane, a client of it, each Node's leaf, a folder for manifests, and each Node as
    derived (name, labels, taints)."""

    plane: ScalePlane
    kube: KubeClient
    leaf: dict[str, str]
    workdir: Path
    nodes: dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    """One plane for the module: 4 Ready fake Nodes and the site's Kueue objects applied."""
    kwok, kueue = _bench("bench_kwok"), _bench("bench_kwok_kueue")
    with (
        tempfile.TemporaryDirectory(prefix="gpurack-gang.") as tmp,
        scale_plane(scheduler=True, kueue=True, jobs=True) as plane,
    ):
        nodes = {n["name"]: n for n in kwok.derive(NODES, Path(tmp), _place)}
        kube = core_v1(str(plane.kubeconfig))
        kwok.register(kube, list(nodes), NODES, build=lambda name: kwok.derived_node(nodes[name]))
        assert kwok.wait_ready(plane, NODES, 60)[1] == NODES
        kueue.apply(plane, kueue.kueue_objects(NODES, _place, GPUS, _team), Path(tmp))
        leaf = {name: node["labels"][LEAF_KEY] for name, node in nodes.items()}
        yield Site(plane, kube, leaf, Path(tmp), nodes)


def _submit(site: Site, name: str, pods: int, mode: str) -> None:
    """The acceptance job's objects (its Service and suspended Job) for `pods` pods of 8 GPUs that
    ask for the leaf level (`mode` required or preferred), applied."""
    spec = JobSpec(name=name, namespace=TEAM, queue=TEAM, image="registry.gpurack.lab/pause:3.10.2",
                   data="-", weights="-", checkpoints="-", s3_secret="none", pods=pods,
                   gpus_per_pod=GPUS, cpu="1", memory="1Gi", topology_level=LEAF_KEY,
                   topology_mode=mode)  # fmt: skip
    _bench("bench_kwok_kueue").apply(site.plane, job_objects(spec), site.workdir, name)


def _pods(site: Site, job: str) -> list[Any]:
    return list(site.kube.core.list_namespaced_pod(TEAM, label_selector=f"{RUN_LABEL}={job}").items)


def _running(site: Site, job: str, count: int) -> dict[str, str]:
    """Each pod's Node, once all `count` pods of the Job are Running (else {}); each asserted put
    there by Kueue's TopologyUngater (its scheduling gate lifted, its Node in its nodeSelector),
    which works without Kueue's webhooks."""
    pods = _pods(site, job)
    if len(pods) != count or any(p.status.phase != "Running" for p in pods):
        return {}
    for pod in pods:
        assert not pod.spec.scheduling_gates, pod.spec.scheduling_gates
        assert (pod.spec.node_selector or {}).get(HOSTNAME_KEY) == pod.spec.node_name, pod.spec.node_selector
    return {p.metadata.name: p.spec.node_name for p in pods}


def _suspended(site: Site, job: str) -> bool:
    """Whether Kueue still holds the Job suspended (so its controller made no pod)."""
    spec = client.BatchV1Api(site.kube.api_client).read_namespaced_job(job, TEAM).spec
    return bool(spec and spec.suspend)


def _workload(site: Site, job: str) -> dict[str, Any] | None:
    return job_workload(TEAM, job, client.CustomObjectsApi(site.kube.api_client))


def _waiting(site: Site, job: str) -> dict[str, Any] | None:
    """The Job's Workload's QuotaReserved condition once Kueue has said why it is not admitted."""
    found = workload_condition(_workload(site, job), "QuotaReserved")
    return found if found and found["status"] == "False" and found.get("message") else None


def _delete(site: Site, *jobs: str) -> None:
    """Delete the Jobs and wait until their pods and Workloads are gone (their GPUs free)."""
    batch = client.BatchV1Api(site.kube.api_client)
    for job in jobs:
        batch.delete_namespaced_job(job, TEAM, propagation_policy="Background")
    wait("the deleted jobs' pods and Workloads to go",
         lambda: not any(_pods(site, j) or _workload(site, j) for j in jobs), 60, 0.5)  # fmt: skip


def _admitted(site: Site, job: str) -> dict[str, Any]:
    """The Job's Workload, asserted admitted with a topology assignment and not suspended."""
    workload = _workload(site, job) or {}
    assert (workload_condition(workload, "Admitted") or {}).get("status") == "True", workload
    assert not _suspended(site, job)
    assignments = workload["status"]["admission"]["podSetAssignments"]
    assert all(a.get("topologyAssignment") for a in assignments), assignments
    return workload


def test_a_job_that_fits_under_one_leaf_is_placed_there(site: Site) -> None:
    _submit(site, "one-leaf", 2, "required")
    placed = wait("2 pods Running", lambda: _running(site, "one-leaf", 2), 60, 0.5)
    assert len(set(placed.values())) == 2, placed
    assert len({site.leaf[node] for node in placed.values()}) == 1, placed
    _admitted(site, "one-leaf")
    _delete(site, "one-leaf")


def test_a_job_that_fits_only_across_leaves_waits_when_required_and_spreads_when_preferred(
    site: Site,
) -> None:
    _submit(site, "required", 3, "required")
    reason = wait("Kueue's reason", lambda: _waiting(site, "required"), 60, 0.5)
    assert 'topology "gpurack-spine-leaf-host" allows to fit only 2 out of 3 pod(s)' in reason["message"]
    assert _pods(site, "required") == [] and _suspended(site, "required")
    assert (workload_condition(_workload(site, "required"), "Admitted") or {}).get("status") != "True"
    _submit(site, "preferred", 3, "preferred")
    placed = wait("3 pods Running", lambda: _running(site, "preferred", 3), 60, 0.5)
    assert len(set(placed.values())) == 3, placed
    assert {site.leaf[node] for node in placed.values()} == set(site.leaf.values()), placed
    _admitted(site, "preferred")
    assert _pods(site, "required") == [] and _suspended(site, "required"), "the required job started"
    _delete(site, "required", "preferred")


def test_a_job_larger_than_what_is_free_gets_no_pod_until_it_fits_whole(site: Site) -> None:
    _submit(site, "holder", 1, "required")
    wait("the holder's pod Running", lambda: _running(site, "holder", 1), 60, 0.5)
    _submit(site, "gang", NODES, "preferred")
    reason = wait("Kueue's reason", lambda: _waiting(site, "gang"), 60, 0.5)
    assert "insufficient unused quota for nvidia.com/gpu" in reason["message"], reason
    assert _pods(site, "gang") == [] and _suspended(site, "gang")
    _delete(site, "holder")
    placed = wait("all 4 pods Running", lambda: _running(site, "gang", NODES), 90, 0.5)
    assert sorted(placed.values()) == sorted(site.leaf), placed
    workload = _admitted(site, "gang")
    wait("PodsReady", lambda: (workload_condition(_workload(site, "gang"), "PodsReady") or {}).get("status")
         == "True", 60, 0.5)  # fmt: skip
    assert workload["status"]["admission"]["podSetAssignments"][0]["count"] == NODES
    _delete(site, "gang")


def _relabel(site: Site, name: str, leaf: str) -> None:
    """Put Node `name` under `leaf` as node_labels does, with k8s_nodes_metadata run by
    ansible-playbook: its derived labels and taints, the leaf level changed."""
    node = site.nodes[name]
    desired = {**node, "labels": {**node["labels"], LEAF_KEY: leaf}}
    result = _bench("bench_kwok").sync(site.plane, [desired], 1, site.workdir)[1]
    assert result["changed_nodes"] == [name] and not result["failed_nodes"], result


def test_a_job_follows_a_node_relabelled_onto_another_leaf(site: Site) -> None:
    """Placement follows the leaf label: a Node of the first leaf relabelled onto the second, as
    node_labels relabels a node in the run whose fabric check named its miscabled NIC (that run is
    lab/tests/test_lab_fabric_e2e.py's; here only the scheduler and Kueue are tested). A job that
    asks for 3 pods under one leaf, which fits under none before (the test above), is placed on the
    moved Node and the second leaf's two. The Node goes back afterwards."""
    moved = sorted(site.leaf)[PER_LEAF - 1]
    old = site.leaf[moved]
    new = next(leaf for leaf in site.leaf.values() if leaf != old)
    under_new = sorted([moved, *(n for n, leaf in site.leaf.items() if leaf == new)])
    _relabel(site, moved, new)
    try:
        _submit(site, "moved", len(under_new), "required")
        placed = wait("3 pods Running", lambda: _running(site, "moved", len(under_new)), 60, 0.5)
        assert sorted(placed.values()) == under_new, placed
        _admitted(site, "moved")
        _delete(site, "moved")
    finally:
        _relabel(site, moved, old)
