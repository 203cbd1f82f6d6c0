"""Rolling patch benchmark: each node's drain, update, reboot and validation, 2 workers at serial 1.

    .venv/bin/python lab/benchmarks/bench_patch.py [--runs 3] [--keep]

Brings up the 2-worker lab with Kubernetes (`make run`'s rack: an 8x H100 HGX and a 1x H200),
runs site.yml, then `gpurack run patch` --runs times, one node at a time with reboots allowed,
moving the stand-in driver between 580.95.05 and 580.105.08 (each run an update and a reboot
of both workers), then once with nothing to do. The figures come from the inventory DB, as
`gpurack report` shows them. Prints Markdown tables (min/median/max per step and node, the
runs' wall times); asserts nothing. Needs root, Docker and `make lab-k8s`; refuses to start
while a lab is up. --keep leaves the lab and its state folder for a look.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_common import ROOT, gpurack, refuse_a_running_lab

INVENTORY = str(ROOT / "lab" / "inventory")
VERSIONS = ("580.105.08", "580.95.05")
STEPS = ("drain_s", "update_s", "reboot_s", "validation_s")


def patch(
    version: str, env: dict[str, str], state: str, label: str
) -> tuple[float, int, list[dict[str, Any]]]:
    """One patch run to `version`: its wall time, the tasks it changed, each node's recorded outcome."""
    argv = ["run", "patch", "-i", INVENTORY, "--json", "-e", f"nvidia_driver_version={version}",
            "-e", "node_update_allow_reboot=true", "-e", "node_maintenance_serial=1"]  # fmt: skip
    took, out = gpurack(argv, env)
    changed = sum(host["changed"] for host in json.loads(out[out.index("{") :])["hosts"])
    folder = Path(state) / f"report-{label}"
    gpurack(["report", "latest", "--format", "json", "--output", str(folder)], env)
    nodes = json.loads((folder / "report.json").read_text())["patch"]["nodes"]
    return took, changed, nodes


def spread(values: list[float]) -> str:
    """min / median / max of seconds."""
    return f"{min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="patch runs that update and reboot (1 to 10)")
    parser.add_argument("--keep", action="store_true", help="leave the lab up afterwards")
    args = parser.parse_args()
    if not 1 <= args.runs <= 10:
        sys.exit("bench: --runs must be 1 to 10")
    refuse_a_running_lab()
    state = tempfile.mkdtemp(prefix="gpurack-bench-patch.")
    env = {**os.environ, "GPURACK_STATE_DIR": state, "GPURACK_DB": f"{state}/inventory.db"}
    gpurack(
        ["lab", "up", "--kubernetes", "--workers", "2", "--profile", "h200x1", "--profile", "hgx-h100x8-ib"],
        env,
    )
    try:
        gpurack(["run", "site", "-i", INVENTORY, "--json"], env)
        steps: dict[tuple[str, str], list[float]] = {}
        walls: list[float] = []
        for run in range(args.runs):
            took, _, nodes = patch(VERSIONS[run % 2], env, state, f"run{run + 1}")
            walls.append(took)
            for node in nodes:
                if node["outcome"] != "patched" or not node["rebooted"]:
                    sys.exit(f"bench: run {run + 1}: {node['host']} was {node['outcome']}: {node['reason']}")
                for step in STEPS:
                    steps.setdefault((str(node["host"]), step), []).append(float(node[step]))
        idle, changed, nodes = patch(VERSIONS[(args.runs - 1) % 2], env, state, "idle")
        outcomes = sorted({str(n["outcome"]) for n in nodes})
    finally:
        if not args.keep:
            gpurack(["lab", "down"], env)
    hosts = sorted({host for host, _ in steps})
    print(f"| step (s, min / median / max of {args.runs} runs, {os.cpu_count()} cores) | "
          + " | ".join(hosts) + " |")  # fmt: skip
    print("|---|" + "---|" * len(hosts))
    for step in STEPS:
        print(f"| {step.removesuffix('_s')} | " + " | ".join(spread(steps[(h, step)]) for h in hosts) + " |")
    print("\n| run | wall time |\n|---|---|")
    print(f"| patch of 2 workers at serial 1, update and reboot (min / median / max) | {spread(walls)} s |")
    print(f"| patch with nothing to do (changed={changed}, outcomes {', '.join(outcomes)}) | {idle:.1f} s |")
    if args.keep:
        print(f"\nlab kept; state folder {state} (GPURACK_STATE_DIR, GPURACK_DB={state}/inventory.db)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
