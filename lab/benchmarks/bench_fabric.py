"""Fabric benchmark: the wall time of one `gpurack fabric check` over 8 switches of 64 ports.

    .venv/bin/python lab/benchmarks/bench_fabric.py [--switches 8] [--runs 3]

Serves the switches with the lab's switch server on loopback (no containers: the servers
are inventory entries only), every port but the last of each switch cabled, and times the
real CLI from the checkout's .venv, --no-record. Prints min/median/max; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpurack_lab import fabric_plan, inventory_writer, switches
from gpurack_lab.state import LabHost, LabState

ROOT = Path(__file__).resolve().parents[2]
GPURACK = ROOT / ".venv" / "bin" / "gpurack"
NICS_PER_SERVER = 8  # the hgx-h100x8-ib pool's RDMA ports
GROUP = "lab_hgx_h100x8_ib"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--switches", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    ports = args.switches * (fabric_plan.PORTS_PER_SWITCH - 1)
    servers = ports // NICS_PER_SERVER
    with tempfile.TemporaryDirectory(prefix="gpurack-bench-fabric-") as scratch:
        os.environ["GPURACK_STATE_DIR"] = str(Path(scratch) / "state")
        workers = tuple(
            LabHost(f"gpu{i:03d}", "worker", "192.0.2.1", "hgx-h100x8-ib", GROUP)
            for i in range(1, servers + 1)
        )
        spec = switches.start(workers, args.switches, ())
        try:
            folder = Path(scratch) / "inventory"
            inventory_writer.link_group_vars(folder)
            state = LabState("none", "none", "none", "none", workers, switches=args.switches)
            hosts = inventory_writer.write(state, folder / "hosts.yml", spec)
            times = []
            for _ in range(args.runs):
                start = time.monotonic()
                done = subprocess.run(
                    [str(GPURACK), "fabric", "check", "-i", str(hosts), "--no-record", "--json"],
                    capture_output=True, text=True, check=False,
                )  # fmt: skip
                times.append(time.monotonic() - start)
                if done.returncode != 0:
                    sys.exit(f"bench_fabric: fabric check exited {done.returncode}: {done.stderr[-400:]}")
        finally:
            switches.stop()
    cabled = servers * NICS_PER_SERVER
    print("| switches | ports each | servers | cabled NICs | runs | min s | median s | max s |")
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| {args.switches} | {fabric_plan.PORTS_PER_SWITCH} | {servers} | {cabled} | {args.runs} "
        f"| {min(times):.2f} | {statistics.median(times):.2f} | {max(times):.2f} |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
