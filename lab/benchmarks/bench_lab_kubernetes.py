"""Lab Kubernetes benchmark: `lab up --kubernetes`, then `gpurack run site` twice, for 2 and 4 workers.

    .venv/bin/python lab/benchmarks/bench_lab_kubernetes.py [--workers 2 4]

Needs root, Docker and the offline build (`make lab-k8s`; its cold time is printed by the
build itself, docs/lab-kubernetes.md). Workers alternate the h200x1 and hgx-h100x8-ib
profiles. Prints a Markdown table with the wall time of each step and the tasks the site
runs changed; asserts nothing. Refuses to start while a lab is up.
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
PROFILES = ("h200x1", "hgx-h100x8-ib")


def gpurack(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Run `gpurack ARGV`; return its wall time and stdout, or exit when it fails."""
    start = time.monotonic()
    done = subprocess.run([str(GPURACK), *argv], env=env, capture_output=True, text=True, check=False)
    took = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"bench: gpurack {' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-600:]}")
    return took, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4])
    args = parser.parse_args()
    state = tempfile.mkdtemp(prefix="gpurack-bench-k8s.")
    env = {**os.environ, "GPURACK_STATE_DIR": state, "GPURACK_DB": f"{state}/inventory.db"}
    if subprocess.run(["docker", "ps", "-q", "--filter", "label=io.gpurack.lab"], capture_output=True,
                      text=True, check=False).stdout.strip():  # fmt: skip
        sys.exit("bench: a lab is up; run 'gpurack lab down' first")
    rows: list[tuple[str, str]] = []
    site = ["run", "site", "-i", str(ROOT / "lab" / "inventory"), "--no-record", "--json"]
    for workers in args.workers:
        profiles = [arg for i in range(workers) for arg in ("--profile", PROFILES[i % 2])]
        took, _ = gpurack(["lab", "up", "--kubernetes", "--workers", str(workers), *profiles], env)
        rows.append((f"lab up --kubernetes, 1 cp + {workers} workers", f"{took:.1f} s"))
        for attempt in ("first", "re-run"):
            took, out = gpurack(site, env)
            changed = sum(host["changed"] for host in json.loads(out[out.index("{") :])["hosts"])
            rows.append((f"site {attempt}, {workers} workers (changed={changed})", f"{took:.1f} s"))
        took, out = gpurack(["lab", "status"], env)
        ready = out.count(" Ready ")
        rows.append((f"nodes Ready after site, {workers} workers", f"{ready} of {workers + 1}"))
        gpurack(["lab", "down"], env)
    print(f"| lab Kubernetes figure ({os.cpu_count()} cores) | value |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
