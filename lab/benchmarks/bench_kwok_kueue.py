"""The Kueue half of bench_kwok.py (`--kueue`): the site's Kueue objects rendered by the project's
own code (plugins/module_utils/platform: one ResourceFlavor per pool with its Topology, one
ClusterQueue per team in the cohort, one LocalQueue per team namespace), one 4-GPU Job per 4 GPUs
of the fleet, all queued at once, and the time until Kueue admitted every one.

The teams: four share the training pool's GPUs, one has the inference pool's. Jobs are created
suspended with their queue's label, as Kueue's mutating webhook would leave them (the scale plane
registers no webhook: nothing can reach one on loopback), and no controller runs them: admission
is what is measured, not the pods.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import gpurack  # noqa: F401 - first: it makes the collection importable
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node import KubeClient
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import (
    build_objects,
    site_from_hostvars,
)
from gpurack_lab.scale_plane import ScalePlane

GPUS_PER_JOB = 4
TRAINING_TEAMS = ("train-a", "train-b", "train-c", "train-d")
SERVING_TEAM = "serve"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
WORKLOADS = "/apis/kueue.x-k8s.io/v1beta2/workloads"
Placement = Callable[[int], tuple[dict[str, Any], str, str]]
# The site's teams (gpurack_teams and the rest of the site's vars) from its pools and their GPUs.
Teams = Callable[[list[dict[str, Any]], dict[str, int]], dict[str, Any]]


def site_vars(pools: list[dict[str, Any]], gpus: dict[str, int]) -> dict[str, Any]:
    """Teams with the whole fleet as nominal quota: the training pool shared by four teams, the
    inference pool (when some Node is in it) one team's."""

    def team(name: str, pool: str, count: int) -> dict[str, Any]:
        # CPU and memory as the Jobs ask (1 CPU, 1 GiB each), so that GPUs are what binds.
        jobs = count // GPUS_PER_JOB
        return {"name": name, "groups": [f"{name}-users"],
                "quota": {pool: {"gpus": count, "cpu": str(jobs), "memory": f"{jobs}Gi"}}}  # fmt: skip

    teams = []
    for pool in pools:
        name, count = pool["name"], gpus[pool["name"]]
        if pool["workload"] == "inference":
            teams.append(team(SERVING_TEAM, name, count))
        else:
            teams.extend(team(t, name, count // len(TRAINING_TEAMS)) for t in TRAINING_TEAMS)
    # topology-aware admission on: each flavor names a Topology of the Nodes' spine, leaf, host
    return {"gpurack_teams": teams, "gpurack_cohort": "bench", "gpurack_kueue_topology": True}


def kueue_objects(
    count: int, placement: Placement, gpus_per_node: int, teams: Teams = site_vars
) -> list[dict[str, Any]]:
    """The Namespaces and Kueue objects of the site that `count` Nodes at `placement` and `teams`
    make."""
    hostvars: dict[str, dict[str, Any]] = {}
    pools: dict[str, dict[str, Any]] = {}
    for i in range(count):
        pool, rack, block = placement(i)
        pools[pool["name"]] = pool
        hostvars[f"node{i}"] = {"gpurack_pool": pool, "gpurack_gpu": {"count": gpus_per_node},
                                "gpurack_rack": rack, "gpurack_block": block}  # fmt: skip
    gpus: dict[str, int] = {}
    for hv in hostvars.values():
        gpus[hv["gpurack_pool"]["name"]] = gpus.get(hv["gpurack_pool"]["name"], 0) + gpus_per_node
    site = site_from_hostvars(hostvars, list(hostvars), teams(list(pools.values()), gpus))
    namespaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": t.name}} for t in site.teams]
    return [*namespaces, *build_objects(site, ("kueue",))]


def apply(
    plane: ScalePlane, objects: list[dict[str, Any]], workdir: Path, name: str = "kueue-objects"
) -> None:
    """kubectl apply --server-side of `objects`, written to `name`.yaml in `workdir` (exits on failure)."""
    path = workdir / f"{name}.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    argv = [str(plane.bin_dir / "kubectl"), f"--kubeconfig={plane.kubeconfig}", "apply", "--server-side",
            f"--filename={path}"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench_kwok: kubectl apply of {path.name} failed: {done.stderr[-800:]}")


def job(team: str, number: int) -> dict[str, Any]:
    """A suspended 1-pod Job of 4 GPUs in the team's LocalQueue."""
    gpus = {"nvidia.com/gpu": str(GPUS_PER_JOB)}
    resources = {"requests": {"cpu": "1", "memory": "1Gi", **gpus}, "limits": gpus}
    container = {"name": "main", "image": "registry.gpurack.lab/pause:3.10.2", "resources": resources}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"job-{number}", "namespace": team, "labels": {QUEUE_LABEL: team}},
        "spec": {
            "suspend": True,
            "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
        },
    }


def jobs_of(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One Job per 4 GPUs of each ClusterQueue's nominal quota: the fleet, exactly."""
    jobs = []
    for queue in (o for o in objects if o["kind"] == "ClusterQueue"):
        for flavor in queue["spec"]["resourceGroups"][0]["flavors"]:
            gpus = next(int(r["nominalQuota"]) for r in flavor["resources"] if r["name"] == "nvidia.com/gpu")
            jobs.extend(job(queue["metadata"]["name"], i) for i in range(gpus // GPUS_PER_JOB))
    return jobs


def create_jobs(kube: KubeClient, jobs: list[dict[str, Any]], concurrency: int) -> float:
    """POST every Job, `concurrency` at a time; the wall time."""
    from kubernetes import client  # noqa: PLC0415 - the module_utils client's package

    batch = client.BatchV1Api(kube.api_client)
    start = time.monotonic()

    def create(job: dict[str, Any]) -> None:
        batch.create_namespaced_job(job["metadata"]["namespace"], job, _preload_content=False)

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(create, jobs))
    return time.monotonic() - start


def admitted(plane: ScalePlane, context: Any) -> tuple[int, int]:
    """How many Workloads hold an admission, and how many of those a topology assignment (Kueue
    placed their pods on Nodes of the flavor's Topology); a LIST of all, 500 a page."""
    count, placed, token = 0, 0, ""
    while True:
        url = f"{plane.server}{WORKLOADS}?limit=500" + (f"&continue={token}" if token else "")
        with urllib.request.urlopen(url, timeout=60, context=context) as answer:
            page = json.load(answer)
        for item in page.get("items") or []:
            admission = (item.get("status") or {}).get("admission")
            if admission:
                count += 1
                placed += all(a.get("topologyAssignment") for a in admission.get("podSetAssignments") or [{}])
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            return count, placed


def wait_admitted(plane: ScalePlane, context: Any, count: int, timeout: float) -> dict[str, float]:
    """Seconds until 99 % and all of `count` Workloads are admitted (or `timeout`), how many were,
    and how many with a topology assignment."""
    start = time.monotonic()
    found = {"admitted": 0.0, "placed": 0.0}
    while time.monotonic() - start < timeout:
        done, placed = admitted(plane, context)
        found.update(admitted=done, placed=placed)
        if done >= 0.99 * count:
            found.setdefault("99%", time.monotonic() - start)
        if done >= count:
            break
        time.sleep(2)
    found["all"] = time.monotonic() - start
    return found
