"""Adding one node to a 1,000-node cluster (issue 31): the whole `gpurack run site --limit` run that
joins a new lab worker while N kwok fake GPU Nodes sit in the lab cluster, beside kubespray#10449's
about 60 minutes.

    .venv/bin/python lab/benchmarks/bench_add_node.py [--nodes 1000] [--concurrency 16] [--keep]

In a fresh state folder of its own: `lab up --kubernetes` (1 control plane, 2 workers), the first
`gpurack run site` (timed), then `lab up` with 3 workers (lab-w3 started, not joined). N Nodes
(lab-l1..) are registered in the lab cluster's API server, each with 8 nvidia.com/gpu, the labels
and pool taints roles/node_labels derives from the real HGX H100 capture (bench_kwok.derive), a pod
CIDR outside the lab's pod subnet and the NoSchedule taint `kwok.x-k8s.io/node=fake` (Jobs and
ordinary pods stay off; DaemonSets that tolerate every taint do not, and kwok fakes those pods
Running: they are counted). kwok (the offline build's, `lab/k8s-build/build.sh --only kwok`, its
log in the state folder) keeps them Ready with the lab's own node lifecycle controller. Then
`gpurack run site --limit lab-w3` is timed, lab-w3 must be a Ready Node, and a Markdown table is
printed. kwok is stopped and `lab down` run at the end (`--keep` leaves the lab up). Needs root,
Docker and `make lab-k8s`; refuses to start while a lab is up.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bench_common
import gpurack  # noqa: F401 - first: it makes the collection importable
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node import KubeClient, core_v1
from bench_common import ROOT, print_table, refuse_a_running_lab
from bench_kwok import GPUS, derive, derived_node, register, wait_until
from gpurack_lab import lab_kubernetes
from gpurack_lab.scale_plane import KWOK_ANNOTATION, KWOK_VALUE, kwok_argv, require_binaries
from gpurack_lab.state import light_name

PROFILES = ("--profile", "h200x1", "--profile", "hgx-h100x8-ib")  # as lab/tests/lab_helpers.py
NEW_NODE = "lab-w3"
KUBESPRAY_MINUTES = 60.0  # kubespray#10449
GOAL_MINUTES = 6.0  # issue 31
FAKE_TAINT = {"key": KWOK_ANNOTATION, "value": KWOK_VALUE, "effect": "NoSchedule"}
STOP_SECONDS = 15.0


def up_argv(workers: int) -> list[str]:
    """`gpurack lab up` of the lab cluster with `workers` workers (LabCluster.up_argv's argv)."""
    return ["lab", "up", "--workers", str(workers), *PROFILES, "--kubernetes"]


def pod_cidr(index: int) -> str:
    """Fake Node `index`'s pod CIDR, in kwok's 10.128.0.0/12: set, so that the lab's node IPAM
    controller gives it none of the 256 /24s of 10.244.0.0/16 (lab-w3 needs one)."""
    return f"10.{128 + index // 256}.{index % 256}.0/24"


def lab_fake_node(node: dict[str, Any], index: int) -> dict[str, Any]:
    """A derived Node (bench_kwok.derive: name, labels, taints) as a fake Node of the lab cluster:
    the labels and pool taints gpurack has set, and the kwok taint that keeps ordinary pods off."""
    body = derived_node(node, (FAKE_TAINT,))
    body["spec"].update(podCIDR=pod_cidr(index), podCIDRs=[pod_cidr(index)])
    return body


@contextmanager
def kwok(state: Path, kubeconfig: Path) -> Iterator[subprocess.Popen[bytes]]:
    """kwok on the lab cluster (the scale plane's arguments), its log state/kwok.log; stopped on exit."""
    bin_dir = lab_kubernetes.build_dir() / "bin"
    require_binaries(bin_dir, ("kwok",))
    with (state / "kwok.log").open("wb") as log:
        argv = kwok_argv(bin_dir, kubeconfig)
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _items(kube: KubeClient, kind: str) -> list[dict[str, Any]]:
    """Every Node or Pod (all namespaces) as raw JSON: one LIST."""
    call = kube.core.list_node if kind == "nodes" else kube.core.list_pod_for_all_namespaces
    items: list[dict[str, Any]] = json.loads(call(_preload_content=False).data).get("items") or []
    return items


def ready_names(kube: KubeClient) -> set[str]:
    """The names of the Nodes with Ready=True."""
    return {
        node["metadata"]["name"]
        for node in _items(kube, "nodes")
        for cond in node.get("status", {}).get("conditions") or []
        if cond.get("type") == "Ready" and cond.get("status") == "True"
    }


def wait_ready(
    kube: KubeClient, names: set[str], timeout: float, proc: subprocess.Popen[bytes] | None = None
) -> tuple[float, int]:
    """Seconds until every Node of `names` is Ready (or `timeout`), and how many were; exits when
    kwok (`proc`) has."""

    def ready() -> int:
        if proc is not None and proc.poll() is not None:
            sys.exit(f"bench_add_node: kwok exited {proc.returncode}; see kwok.log in the state folder")
        return len(names & ready_names(kube))

    return wait_until(ready, len(names), timeout, every=2)


def pods_on(kube: KubeClient, names: set[str]) -> int:
    """How many pods are bound to the Nodes of `names`."""
    return sum(1 for pod in _items(kube, "pods") if pod.get("spec", {}).get("nodeName") in names)


def site(env: dict[str, str], limit: str | None = None) -> tuple[float, list[str]]:
    """`gpurack run site` on the lab inventory (exits unless 0): its wall time and the hosts it ran on."""
    argv = ["run", "site", "-i", str(ROOT / "lab" / "inventory"), *(["-l", limit] if limit else []), "--json"]
    took, out = bench_common.gpurack(argv, env)
    return took, [host["host"] for host in json.loads(out[out.index("{") :])["hosts"]]


@dataclass(frozen=True, slots=True)
class Figures:
    """What the benchmark measured, in seconds."""

    nodes: int
    lab_up: float
    first_site: float
    first_hosts: int
    grow: float
    registered: float
    ready_after: float
    ready: int
    add_node: float
    add_hosts: list[str]
    new_node_ready: bool
    pods_on_fake: int


def verdict(add_node: float) -> tuple[str, str]:
    """The `--limit` run against kubespray#10449's 60 min (their ratio) and against the goal."""
    minutes = add_node / 60
    ratio = f"{minutes / KUBESPRAY_MINUTES:.3f} ({KUBESPRAY_MINUTES / minutes:.0f}x shorter)"
    goal = f"{'met' if minutes <= GOAL_MINUTES else 'missed'} ({minutes:.1f} min)"
    return ratio, goal


def rows(fig: Figures, concurrency: int) -> list[tuple[str, str]]:
    """The figures as (what, value) rows, beside kubespray#10449."""
    ratio, goal = verdict(fig.add_node)
    return [
        ("kwok fake Nodes in the lab cluster", f"{fig.nodes:,} ({GPUS} nvidia.com/gpu each)"),
        ("lab up --kubernetes, 1 cp + 2 workers", f"{fig.lab_up:.1f} s"),
        (f"site, first run ({fig.first_hosts} hosts)", f"{fig.first_site:.1f} s"),
        (f"lab up, 3 workers ({NEW_NODE} started, not joined)", f"{fig.grow:.1f} s"),
        (f"register {fig.nodes:,} Nodes (POST, {concurrency} at a time)", f"{fig.registered:.1f} s"),
        ("kwok: all Ready, after registering", f"{fig.ready_after:.1f} s ({fig.ready:,} Ready)"),
        (f"site --limit {NEW_NODE} ({', '.join(fig.add_hosts)}), beside {fig.nodes:,} Nodes",
         f"{fig.add_node:.1f} s ({fig.add_node / 60:.1f} min)"),
        (f"{NEW_NODE} a Ready Node", "yes" if fig.new_node_ready else "no"),
        ("pods on the fake Nodes (DaemonSets tolerating every taint; kwok fakes them Running)",
         f"{fig.pods_on_fake:,}"),
        ("kubespray#10449: about 60 min to add one node to a 1,000-node cluster",
         f"{KUBESPRAY_MINUTES:.0f} min"),
        (f"--limit {NEW_NODE} run / kubespray#10449's 60 min", ratio),
        (f"goal: at most {GOAL_MINUTES:.0f} min", goal),
    ]  # fmt: skip


def fleet(
    args: argparse.Namespace, kube: KubeClient, state: Path, proc: subprocess.Popen[bytes]
) -> tuple[float, float, int]:
    """Register the fake Nodes and wait until kwok (`proc`) has them Ready: registration's and
    Ready's seconds, and how many are."""
    (state / "derive").mkdir(exist_ok=True)
    derived = derive(args.nodes, state / "derive")
    built = {node["name"]: lab_fake_node(node, i) for i, node in enumerate(derived)}
    registered = register(kube, list(built), args.concurrency, built.__getitem__)
    ready_after, ready = wait_ready(kube, set(built), args.ready_timeout, proc)
    if ready < args.nodes:
        sys.exit(f"bench_add_node: {ready:,} of {args.nodes:,} fake Nodes Ready after {ready_after:.0f} s")
    return registered, ready_after, ready


def measure(args: argparse.Namespace, state: Path, env: dict[str, str]) -> Figures:
    """Bring the lab up, run site, grow it by lab-w3, add the fake fleet and time joining lab-w3,
    with kwok running from the fleet's registration to the end."""
    lab_up, _ = bench_common.gpurack(up_argv(2), env)
    first_site, first_hosts = site(env)
    grow, _ = bench_common.gpurack(up_argv(3), env)
    config = lab_kubernetes.kubeconfig()
    if not config.is_file():
        sys.exit(f"bench_add_node: no admin kubeconfig at {config} after site")
    kube = core_v1(str(config), pool_size=args.concurrency)
    with kwok(state, config) as proc:
        registered, ready_after, ready = fleet(args, kube, state, proc)
        add_node, add_hosts = site(env, NEW_NODE)
        _, new_ready = wait_ready(kube, {NEW_NODE}, 180, proc)
        on_fake = pods_on(kube, {light_name(i) for i in range(1, args.nodes + 1)})
    return Figures(
        nodes=args.nodes, lab_up=lab_up, first_site=first_site, first_hosts=len(first_hosts), grow=grow,
        registered=registered, ready_after=ready_after, ready=ready, add_node=add_node,
        add_hosts=add_hosts, new_node_ready=new_ready == 1, pods_on_fake=on_fake,
    )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000, help="kwok fake Nodes")
    parser.add_argument("--concurrency", type=int, default=16, help="Nodes registered at a time")
    parser.add_argument("--ready-timeout", type=float, default=600, help="seconds to wait for kwok")
    parser.add_argument("--keep", action="store_true", help="leave the lab up (its state folder printed)")
    args = parser.parse_args()
    refuse_a_running_lab()
    state = Path(tempfile.mkdtemp(prefix="gpurack-bench-add-node."))
    # This process too: lab_kubernetes.kubeconfig() names the lab's kubeconfig from it.
    os.environ.update(GPURACK_STATE_DIR=str(state), GPURACK_DB=str(state / "inventory.db"))
    env = dict(os.environ)
    try:
        fig = measure(args, state, env)
    finally:
        if args.keep:
            print(f"bench_add_node: the lab is kept; GPURACK_STATE_DIR={state}", file=sys.stderr)
        else:
            bench_common.gpurack(["lab", "down"], env)
    title = f"Adding one node beside {args.nodes:,} kwok GPU Nodes, lab cluster, {os.cpu_count()} cores"
    print_table(title, rows(fig, args.concurrency))
    return 0 if fig.new_node_ready else 1


if __name__ == "__main__":
    sys.exit(main())
