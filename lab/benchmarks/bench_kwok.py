"""1,000 GPU nodes benchmark: the label reconcile of a whole fleet, against a real API server whose
Nodes are kept Ready by kwok (issue 31).

    .venv/bin/python lab/benchmarks/bench_kwok.py [--nodes 1000] [--concurrency 16] [--keep]

Starts the scale plane (lab/gpurack_lab/scale_plane.py: etcd, kube-apiserver and kwok as
processes on loopback, from `make lab-k8s` and `lab/k8s-build/build.sh --only kwok`), registers
N Nodes named like the light lab's hosts (lab-l1..), each with 8 nvidia.com/gpu and the
`gpurack.io/validating` taint, as kubeadm join leaves them, and times kwok making them Ready.
Each Node's labels and taints are derived as the node_labels role derives them, with the real
code, from the facts of the real HGX H100 capture (the hgx-h100x8-ib lab profile): the lab's
training pool, every fourth leaf of 32 Nodes an inference pool, rack (leaf) and block (spine) per
Node. Then `k8s_nodes_metadata` sets them all, run by ansible-playbook as a role would: cold
(nothing set yet) and warm (nothing to change: it must patch nothing). Prints a Markdown table;
asserts nothing. Processes only: no Docker, nothing outside 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bench_kwok_kueue as kueue
import gpurack  # noqa: F401 - first: it makes the collection importable
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels import pool_taints, topology_labels
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node import KubeClient, core_v1
from bench_common import ROOT, print_table
from gpurack.facts import Origin, read_node
from gpurack_lab import profiles
from gpurack_lab.scale_plane import (
    KWOK_ANNOTATION,
    KWOK_VALUE,
    ScalePlane,
    ready_nodes,
    scale_plane,
    tls_context,
)
from gpurack_lab.state import light_name

PROFILE = "hgx-h100x8-ib"
POOL_FILE = ROOT / "lab" / "inventory" / "group_vars" / "lab_hgx_h100x8_ib" / "pool.yml"
LEAF_SIZE, LEAVES_PER_BLOCK = 32, 8
GPUS = 8
GOALS = {"cold": 60.0, "warm": 10.0}
PLAYBOOK = """\
- name: Reconcile the fake Nodes' gpurack labels and taints
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Set the labels and taints of every Node
      gpurack.bootstrap.k8s_nodes_metadata:
        kubeconfig: "{{ bench_kubeconfig }}"
        nodes: "{{ bench_nodes }}"
        concurrency: "{{ bench_concurrency }}"
      register: bench_result
    - name: Write the module's result for the benchmark
      ansible.builtin.copy:
        content: "{{ bench_result | to_json }}"
        dest: "{{ bench_out }}"
        mode: "0600"
"""
OS_RELEASE = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n'
UNAME = "Linux gpu 6.1.0-28-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 x86_64 GNU/Linux\n"


def _pools() -> tuple[dict[str, Any], dict[str, Any]]:
    """The lab's HGX training pool, and an inference pool on the same hardware (every 4th leaf)."""
    training: dict[str, Any] = yaml.safe_load(POOL_FILE.read_text())["gpurack_pool"]
    name = "lab-hgx-h100x8-inference"
    # An inference pool hands out nvidia.com/gpu (a DRA allocation is for training and batch).
    inference = {**training, "name": name, "workload": "inference", "allocation": "device-plugin"}
    inference["taints"] = [{"key": "gpurack.io/pool", "value": name, "effect": "NoSchedule"}]
    return training, inference


POOLS = _pools()


def placement(index: int) -> tuple[dict[str, Any], str, str]:
    """Node `index`'s pool (every fourth leaf of 32 the inference pool), rack (leaf) and block."""
    leaf = index // LEAF_SIZE
    training, inference = POOLS
    pool = inference if leaf % 4 == 3 else training
    return pool, f"lab-rack{leaf + 1}", f"lab-block{leaf // LEAVES_PER_BLOCK + 1}"


def derive(count: int, workdir: Path, place: kueue.Placement = placement) -> list[dict[str, Any]]:
    """Each Node's desired labels and taints, as roles/node_labels derives them (derive.yml), at
    `place` (pool, rack and block of each Node's index)."""
    capture = profiles.assemble(profiles.resolve(PROFILE), workdir / "capture", OS_RELEASE, UNAME)
    derived = {}
    for pool in POOLS:
        facts = read_node(Origin("capture", capture), pool)  # the real facts-from-capture path
        taints = [t for t in pool_taints(pool) if t["key"] != "gpurack.io/validating"]
        derived[pool["name"]] = ({**facts.labels, "node-role.kubernetes.io/gpu": ""}, taints)
    nodes = []
    for i in range(count):
        pool, rack, block = place(i)
        labels, taints = derived[pool["name"]]
        # no fabric read here: the inventory's rack and block are the leaf and spine
        topology = topology_labels(None, rack, block)
        nodes.append({"name": light_name(i + 1), "labels": {**labels, **topology}, "taints": taints})
    return nodes


def fake_node(name: str, taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """A Node as kubeadm join registers a GPU node, for kwok to keep Ready: its `taints`, the
    validating one by default."""
    resources = {"cpu": "224", "memory": "2063937Mi", "pods": "110", "nvidia.com/gpu": str(GPUS)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {KWOK_ANNOTATION: KWOK_VALUE},
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
            },
        },
        "spec": {"taints": taints or [{"key": "gpurack.io/validating", "effect": "NoSchedule"}]},
        "status": {"capacity": resources, "allocatable": resources},
    }


def derived_node(node: dict[str, Any], extra_taints: tuple[dict[str, str], ...] = ()) -> dict[str, Any]:
    """A derived Node (`derive`: name, labels, taints) as a fake Node that carries what gpurack has
    set (validation passed), and `extra_taints`."""
    body = fake_node(node["name"])
    body["spec"]["taints"] = [*node["taints"], *extra_taints]
    body["metadata"]["labels"].update(node["labels"])
    return body


def register(
    kube: KubeClient, names: list[str], concurrency: int, build: Callable[[str], dict[str, Any]] = fake_node
) -> float:
    """POST every Node (`build` makes it from its name), `concurrency` at a time; the wall time."""
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(lambda n: kube.core.create_node(build(n), _preload_content=False), names))
    return time.monotonic() - start


def wait_until(
    count_ready: Callable[[], int], count: int, timeout: float, every: float = 1.0
) -> tuple[float, int]:
    """Seconds until `count_ready()` reaches `count` (or `timeout`), and its last answer."""
    start = time.monotonic()
    ready = 0
    while time.monotonic() - start < timeout:
        ready = count_ready()
        if ready >= count:
            break
        time.sleep(every)
    return time.monotonic() - start, ready


def wait_ready(plane: ScalePlane, count: int, timeout: float) -> tuple[float, int]:
    """Seconds until `count` Nodes of the plane are Ready (or `timeout`), and how many were."""
    return wait_until(lambda: ready_nodes(plane), count, timeout)


def sync(
    plane: ScalePlane, nodes: list[dict[str, Any]], concurrency: int, workdir: Path
) -> tuple[float, dict[str, Any]]:
    """ansible-playbook with k8s_nodes_metadata over every Node: its wall time and the module's result."""
    (workdir / "sync.yml").write_text(PLAYBOOK)
    out = workdir / "result.json"
    out.unlink(missing_ok=True)
    extra = {"bench_kubeconfig": str(plane.kubeconfig), "bench_nodes": nodes,
             "bench_concurrency": concurrency, "bench_out": str(out)}  # fmt: skip
    (workdir / "vars.json").write_text(json.dumps(extra))
    env = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")}
    argv = [
        str(ROOT / ".venv" / "bin" / "ansible-playbook"),
        str(workdir / "sync.yml"),
        "-e",
        f"@{workdir / 'vars.json'}",
    ]
    start = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)
    took = time.monotonic() - start
    if done.returncode != 0 or not out.is_file():
        tail = f"{done.stdout[-1500:]}{done.stderr[-600:]}"
        sys.exit(f"bench_kwok: ansible-playbook exited {done.returncode}: {tail}")
    result: dict[str, Any] = json.loads(out.read_text())
    return took, result


def sync_rows(
    run: str, took: float, result: dict[str, Any], goals: dict[str, float] = GOALS
) -> list[tuple[str, str]]:
    """A sync run's wall time (against its goal at 1,000 Nodes) and what the module did."""
    goal = goals.get(run)
    verdict = f" ({'met' if took <= goal else 'missed'})" if goal else ""
    changed, failed = len(result["changed_nodes"]), len(result["failed_nodes"])
    return [
        (f"sync {run}: ansible-playbook wall" + (f" (goal <= {goal:.0f} s)" if goal else ""),
         f"{took:.1f} s{verdict}"),
        (f"sync {run}: patches sent / Nodes changed / failed / LIST pages",
         f"{result['patches']} / {changed} / {failed} / {result['lists']}"),
    ]  # fmt: skip


def kueue_rows(
    args: argparse.Namespace, plane: ScalePlane, kube: KubeClient, workdir: Path
) -> list[tuple[str, str]]:
    """Kueue's objects for the fleet, one 4-GPU Job per 4 GPUs queued at once, and their admission."""
    objects = kueue.kueue_objects(args.nodes, placement, GPUS)
    kueue.apply(plane, objects, workdir)
    jobs = kueue.jobs_of(objects)
    took = kueue.create_jobs(kube, jobs, args.concurrency)
    flavors = sum(1 for o in objects if o["kind"] == "ResourceFlavor")
    queues = sum(1 for o in objects if o["kind"] == "ClusterQueue")
    rows = [(f"Kueue: create {len(jobs):,} suspended Jobs of {kueue.GPUS_PER_JOB} GPUs "
             f"({queues} ClusterQueues, {flavors} flavors with a Topology)", f"{took:.1f} s")]  # fmt: skip
    found = kueue.wait_admitted(plane, tls_context(plane), len(jobs), args.kueue_timeout)
    rows.append(
        ("Kueue: 99 % admitted, after the last Job was created", f"{found.get('99%', float('nan')):.1f} s")
    )
    rows.append(("Kueue: all admitted, after the last Job was created",
                 f"{found['all']:.1f} s ({found['admitted']:,.0f} admitted, "
                 f"{found['placed']:,.0f} with a topology assignment)"))  # fmt: skip
    return rows


@dataclass(frozen=True, slots=True)
class Fleet:
    """The label sync of a fleet of fake Nodes: registration, Ready, and each sync run's wall time
    and the module's result (changed_nodes, failed_nodes, patches, lists)."""

    registered: float
    ready_after: float
    ready: int
    syncs: dict[str, tuple[float, dict[str, Any]]]


def sync_fleet(
    plane: ScalePlane, kube: KubeClient, nodes: list[dict[str, Any]], args: argparse.Namespace, workdir: Path
) -> Fleet:
    """Register the Nodes, wait until kwok has them Ready, then sync their labels cold and warm."""
    registered = register(kube, [n["name"] for n in nodes], args.concurrency)
    ready_after, ready = wait_ready(plane, len(nodes), args.ready_timeout)
    syncs = {run: sync(plane, nodes, args.concurrency, workdir) for run in ("cold", "warm")}
    return Fleet(registered, ready_after, ready, syncs)


def fleet_rows(
    fleet: Fleet, count: int, concurrency: int, goals: dict[str, float] = GOALS
) -> list[tuple[str, str]]:
    """The fleet's figures as (what, value) rows; `goals` {} for a fleet of another size."""
    rows = [
        (f"register {count:,} Nodes (POST, {concurrency} at a time)", f"{fleet.registered:.1f} s"),
        ("kwok: all Ready, after registering", f"{fleet.ready_after:.1f} s ({fleet.ready:,} Ready)"),
    ]
    for run, (took, result) in fleet.syncs.items():
        rows.extend(sync_rows(run, took, result, goals))
    return rows


def measure(args: argparse.Namespace, workdir: Path) -> list[tuple[str, str]]:
    """Every figure, as (what, value) rows."""
    nodes = derive(args.nodes, workdir)
    rows = [("nodes", f"{args.nodes:,} ({GPUS} nvidia.com/gpu each, leaves of {LEAF_SIZE})")]
    start = time.monotonic()
    with scale_plane(kueue=args.kueue, keep=args.keep) as plane:
        up = "etcd, kube-apiserver, kwok" + (", Kueue" if args.kueue else "")
        rows.append((f"scale plane up ({up})", f"{time.monotonic() - start:.1f} s"))
        kube = core_v1(str(plane.kubeconfig), pool_size=args.concurrency)
        rows.extend(fleet_rows(sync_fleet(plane, kube, nodes, args, workdir), args.nodes, args.concurrency))
        if args.kueue:
            # Kueue's flavors tolerate the pool taints, never gpurack.io/validating: pass validation.
            passed = [{**n, "validation": "pass"} for n in nodes]
            rows.extend(sync_rows("validation pass", *sync(plane, passed, args.concurrency, workdir)))
            rows.extend(kueue_rows(args, plane, kube, workdir))
        if args.keep:
            rows.append(("kept (logs, PKI, etcd data)", str(plane.folder)))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument(
        "--concurrency", type=int, default=16, help="registration and the module's concurrency"
    )
    parser.add_argument("--ready-timeout", type=float, default=300, help="seconds to wait for kwok")
    parser.add_argument("--kueue", action="store_true", help="then queue one 4-GPU Job per 4 GPUs in Kueue")
    parser.add_argument("--kueue-timeout", type=float, default=600, help="seconds to wait for admission")
    parser.add_argument("--keep", action="store_true", help="keep the scale plane's folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpurack-bench-kwok.") as tmp:
        rows = measure(args, Path(tmp))
    print_table(
        f"{args.nodes:,}-node benchmark on {os.cpu_count()} cores (kwok fake Nodes, real API server)", rows
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
