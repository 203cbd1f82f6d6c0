"""Lab benchmark: cold and warm `gpurack lab up`, preflight and prepare wall times for 2 and 4 workers.

    .venv/bin/python lab/benchmarks/bench_lab.py [--workers 2 4] [--profile hgx-h100x8-ib] [--no-cold]

Needs root and Docker (like `gpurack lab up`). Prints a Markdown table; asserts nothing.
Cold builds the node image from scratch under a throwaway repository name
(GPURACK_NODE_IMAGE_REPO=gpurack-lab-bench), so the shared gpurack-node image that
Molecule uses is never rebuilt or removed; warm reuses the cached image. Each figure is
one run of the real CLI, from the checkout's .venv. Refuses to start while a lab is up.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GPURACK = ROOT / ".venv" / "bin" / "gpurack"


def timed(argv: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> float:
    """Run `gpurack ARGV`; return its wall time in seconds, or exit when it fails."""
    start = time.monotonic()
    done = subprocess.run([str(GPURACK), *argv], env=env, capture_output=True, text=True, check=False)
    took = time.monotonic() - start
    if done.returncode not in ok:
        sys.exit(
            f"bench_lab: gpurack {' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-400:]}"
        )
    return took


def timed_prepare(env: dict[str, str]) -> tuple[float, int]:
    """Run prepare on the lab; return its wall time and the changed tasks summed over hosts."""
    argv = [str(GPURACK), "run", "prepare", "-i", str(ROOT / "lab" / "inventory"), "--no-record", "--json"]
    start = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    took = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"bench_lab: prepare exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return took, sum(host["changed"] for host in json.loads(done.stdout)["hosts"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--profile", default="hgx-h100x8-ib")
    parser.add_argument("--no-cold", action="store_true", help="skip the from-scratch image build")
    args = parser.parse_args()
    state = tempfile.mkdtemp(prefix="gpurack-bench-lab.")
    env = {**os.environ, "GPURACK_STATE_DIR": state, "GPURACK_DB": f"{state}/inventory.db"}
    rows: list[tuple[str, str]] = []
    if subprocess.run(["docker", "ps", "-q", "--filter", "label=io.gpurack.lab"], capture_output=True,
                      text=True, check=False).stdout.strip():  # fmt: skip
        sys.exit("bench_lab: a lab is up; run 'gpurack lab down' first")
    up = ["lab", "up", "--workers", "1", "--profile", args.profile]
    if not args.no_cold:
        cold_env = {**env, "GPURACK_NODE_IMAGE_REPO": "gpurack-lab-bench"}
        rows.append(
            ("lab up, cold (image built from scratch, 1 cp + 1 worker)", f"{timed(up, cold_env):.1f} s")
        )
        timed(["lab", "down", "--purge"], cold_env)
    timed(up, env)  # make sure the shared image is cached before the warm figure
    timed(["lab", "down"], env)
    rows.append(("lab up, warm (image cached, 1 cp + 1 worker)", f"{timed(up, env):.1f} s"))
    rows.append(("lab up again while up (idempotent)", f"{timed(up, env):.1f} s"))
    rows.append(("lab down (1 cp + 1 worker)", f"{timed(['lab', 'down'], env):.1f} s"))
    for workers in args.workers:
        up_n = ["lab", "up", "--workers", str(workers), "--profile", args.profile]
        rows.append((f"lab up, warm, 1 cp + {workers} workers", f"{timed(up_n, env):.1f} s"))
        preflight = timed(["run", "preflight", "-i", str(ROOT / "lab" / "inventory"), "--no-record"], env)
        rows.append((f"preflight, {workers} workers ({args.profile})", f"{preflight:.1f} s"))
        for attempt in ("converge", "re-run"):
            prepare, changed = timed_prepare(env)
            rows.append((f"prepare {attempt}, {workers} workers (changed={changed})", f"{prepare:.1f} s"))
        timed(["lab", "down"], env)
    print(f"| lab figure ({os.cpu_count()} cores) | wall time |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
