"""Smoke of the scale benchmarks, a stage of `make test`: preflight on 10 light hosts
(bench_scale.py) and the label sync of 100 kwok Nodes (bench_kwok.py), at a size that runs in
about a minute. It asserts what they did, never how long it took, and prints their figures.

    .venv/bin/python lab/benchmarks/bench_scale_smoke.py [--hosts 10] [--nodes 100]
        [--state-dir DIR]

The light lab has its own network (lab-light-net), inventory and state folder (a fresh one, or
--state-dir, which must hold no lab), so it runs beside the lab cluster of `make test`'s other
lane, and its `lab down` removes only what it made. The scale plane is processes on loopback.
Asserted: preflight passed on every light host; every Node registered and Ready; the sync
changed every Node cold (none failed) and sent no patch warm.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import gpurack  # noqa: F401 - first: it makes the collection importable
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node import core_v1
from bench_common import print_table
from bench_kwok import GPUS, Fleet, derive, fleet_rows, sync_fleet
from bench_scale import Size, light_lab, preflight, table
from gpurack_lab.scale_plane import scale_plane
from gpurack_lab.state import LIGHT_NETWORK


def light(args: argparse.Namespace) -> list[str]:
    """Preflight on every light host, its table printed: the failures found."""
    with (
        tempfile.TemporaryDirectory(prefix="gpurack-scale-smoke.") as scratch,
        light_lab(args.hosts, args.profile, args.state_dir or Path(scratch)) as (env, up),
    ):
        took, passed = preflight(args.hosts, env)
    print(f"lab up --light {args.hosts} ({LIGHT_NETWORK}): {up:.1f} s\n")
    print("\n".join(table([Size(args.hosts, took, None, passed)], "ansible.cfg")))
    return [] if passed == args.hosts else [f"preflight passed on {passed} of {args.hosts} light hosts"]


def kwok(args: argparse.Namespace) -> list[str]:
    """The label sync of the kwok Nodes, cold and warm: the failures found."""
    with tempfile.TemporaryDirectory(prefix="gpurack-scale-smoke-kwok.") as tmp:
        nodes = derive(args.nodes, Path(tmp))
        with scale_plane() as plane:
            kube = core_v1(str(plane.kubeconfig), pool_size=args.concurrency)
            fleet = sync_fleet(plane, kube, nodes, args, Path(tmp))
    title = f"\n{args.nodes} kwok Nodes ({GPUS} nvidia.com/gpu each), {os.cpu_count()} cores"
    print_table(title, fleet_rows(fleet, args.nodes, args.concurrency, goals={}))
    return fleet_failures(fleet, args.nodes)


def fleet_failures(fleet: Fleet, count: int) -> list[str]:
    """What the fleet of `count` Nodes did that it should not have: all Ready, all changed cold
    and none failed, no patch and no change warm."""
    (_, cold), (_, warm) = fleet.syncs["cold"], fleet.syncs["warm"]
    found = {
        "Ready": fleet.ready,
        "changed cold": len(cold["changed_nodes"]),
        "failed cold": len(cold["failed_nodes"]),
        "patches warm": warm["patches"],
        "changed warm": len(warm["changed_nodes"]),
    }
    wanted = {"Ready": count, "changed cold": count, "failed cold": 0, "patches warm": 0, "changed warm": 0}
    return [f"kwok: {what} {found[what]}, not {want}" for what, want in wanted.items() if found[what] != want]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10, help="light lab hosts")
    parser.add_argument("--profile", default="h200x1")
    parser.add_argument("--nodes", type=int, default=100, help="kwok Nodes")
    parser.add_argument(
        "--concurrency", type=int, default=16, help="registration and the module's concurrency"
    )
    parser.add_argument("--ready-timeout", type=float, default=120, help="seconds to wait for kwok")
    parser.add_argument("--state-dir", type=Path, help="the light lab's state folder (default: a fresh one)")
    args = parser.parse_args()
    failures = light(args) + kwok(args)
    for failure in failures:
        print(f"bench_scale_smoke: FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
