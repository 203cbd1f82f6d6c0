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
import sys
import tempfile

from bench_common import ROOT, gpurack, refuse_a_running_lab

PROFILES = ("h200x1", "hgx-h100x8-ib")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4])
    args = parser.parse_args()
    state = tempfile.mkdtemp(prefix="gpurack-bench-k8s.")
    env = {**os.environ, "GPURACK_STATE_DIR": state, "GPURACK_DB": f"{state}/inventory.db"}
    refuse_a_running_lab()
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
