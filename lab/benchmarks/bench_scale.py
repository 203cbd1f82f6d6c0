"""Scale benchmark: preflight wall time against the number of hosts, on a light lab (sshd-only
containers replaying a capture), and the cost of each extra host.

    .venv/bin/python lab/benchmarks/bench_scale.py [--hosts 1 10 50 100] [--profile h200x1]
        [--forks 20] [--repeat 1]

Brings up `gpurack lab up --light MAX` in a fresh state folder, runs `gpurack run preflight
--no-record` on the first N hosts of gpu_nodes for each N (the light lab's hosts are all in
one pool group, in order), prints a Markdown table and removes the lab. The per-extra-host
cost is (t(N) - t(smallest N)) / (N - smallest N). Needs root and Docker; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

from bench_common import ROOT, gpurack, refuse_a_running_lab


def preflight(n: int, env: dict[str, str]) -> tuple[float, int]:
    """Wall time of preflight on the first n light hosts, and how many hosts passed."""
    took, out = gpurack(
        ["run", "preflight", "-i", str(ROOT / "lab" / "inventory"), "-l", f"gpu_nodes[0:{n - 1}]",
         "--no-record", "--json"],
        env,
    )  # fmt: skip
    hosts = [h for h in json.loads(out)["hosts"] if h["host"].startswith("lab-l")]
    if len(hosts) != n:
        sys.exit(f"bench_scale: preflight ran on {len(hosts)} hosts, not {n}")
    return took, sum(1 for h in hosts if not h.get("failed") and not h.get("unreachable"))


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[1, 10, 50, 100])
    parser.add_argument("--profile", default="h200x1")
    parser.add_argument("--forks", type=int, help="ANSIBLE_FORKS for the runs (default: ansible.cfg's)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size; the median is printed")
    args = parser.parse_args()
    refuse_a_running_lab()
    sizes = sorted(set(args.hosts))
    state = tempfile.mkdtemp(prefix="gpurack-bench-scale.")
    env = {**os.environ, "GPURACK_STATE_DIR": state, "GPURACK_DB": f"{state}/inventory.db"}
    if args.forks:
        env["ANSIBLE_FORKS"] = str(args.forks)
    up, _ = gpurack(["lab", "up", "--light", str(sizes[-1]), "--profile", args.profile], env)
    rows: list[tuple[int, float, int]] = []
    try:
        for n in sizes:
            runs = [preflight(n, env) for _ in range(args.repeat)]
            rows.append((n, statistics.median(t for t, _ in runs), min(p for _, p in runs)))
    finally:
        gpurack(["lab", "down"], env)
    forks = args.forks or "ansible.cfg"
    print(f"lab up --light {sizes[-1]}: {up:.1f} s ({os.cpu_count()} cores)\n")
    print(f"| hosts | preflight wall (forks {forks}) | passed | per host | per extra host |")
    print("|---:|---:|---:|---:|---:|")
    base_n, base_t, _ = rows[0]
    for n, took, passed in rows:
        extra = f"{(took - base_t) / (n - base_n):.2f} s" if n > base_n else "-"
        print(f"| {n} | {took:.1f} s | {passed} | {took / n:.2f} s | {extra} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
