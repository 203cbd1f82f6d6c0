"""Scale benchmark: preflight wall time against the number of hosts, on a light lab (sshd-only
containers replaying a capture), the cost of each extra host and of a re-run, and a plot.

    .venv/bin/python lab/benchmarks/bench_scale.py [--hosts 1 10 50 100] [--profile h200x1]
        [--forks 20] [--repeat 2] [--png .cache/bench/scale-preflight.png] [--beside-a-lab]
        [--state-dir DIR]

Brings up `gpurack lab up --light MAX` in a fresh state folder (its own network and inventory),
runs `gpurack run preflight --no-record` on the first N hosts of gpu_nodes `--repeat` times for
each N (the light lab's hosts are all in one pool group, in order): the first run, then re-runs
(their median). Prints a Markdown table with the ratios, draws wall time against N into a PNG
(bench_plot.py) and removes the lab. Per host is t(N) / N; per extra host (t(N) - t(smallest N))
/ (N - smallest N), both of the first run; re-run / first is the re-run's share of the first
run. Needs root and Docker; refuses to measure beside another lab unless --beside-a-lab (its
own network and state keep them apart, but they share the machine); asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench_common import ROOT, gpurack, refuse_a_running_lab
from bench_plot import plot_scale
from gpurack_lab import rack

PNG = ROOT / ".cache" / "bench" / "scale-preflight.png"


@dataclass(frozen=True, slots=True)
class Size:
    """Preflight at one number of hosts: the first run, the re-runs' median, hosts that passed."""

    hosts: int
    first: float
    rerun: float | None
    passed: int


@contextmanager
def light_lab(count: int, profile: str, state: Path) -> Iterator[tuple[dict[str, str], float]]:
    """`lab up --light COUNT` in the state folder `state`, which must hold no lab: the environment
    that runs gpurack against it and lab up's wall time; `lab down` of that folder at the end."""
    if (state / "lab").exists():
        sys.exit(f"bench: {state} holds a lab already; give a state folder of the benchmark's own")
    # This process too: rack.hosts_file() names the light lab's inventory from it.
    os.environ.update(GPURACK_STATE_DIR=str(state), GPURACK_DB=str(state / "inventory.db"))
    env = dict(os.environ)
    took, _ = gpurack(["lab", "up", "--light", str(count), "--profile", profile], env)
    try:
        yield env, took
    finally:
        gpurack(["lab", "down"], env)


def preflight(n: int, env: dict[str, str]) -> tuple[float, int]:
    """Wall time of preflight on the first n light hosts, and how many hosts passed."""
    inventory = rack.hosts_file(light=True).parent
    took, out = gpurack(
        ["run", "preflight", "-i", str(inventory), "-l", f"gpu_nodes[0:{n - 1}]", "--no-record", "--json"],
        env,
    )
    hosts = [h for h in json.loads(out)["hosts"] if h["host"].startswith("lab-l")]
    if len(hosts) != n:
        sys.exit(f"bench_scale: preflight ran on {len(hosts)} hosts, not {n}")
    return took, sum(1 for h in hosts if not h.get("failed") and not h.get("unreachable"))


def measure(n: int, repeat: int, env: dict[str, str]) -> Size:
    """Preflight on n hosts, `repeat` times: the first run and the re-runs' median."""
    runs = [preflight(n, env) for _ in range(repeat)]
    rerun = statistics.median(t for t, _ in runs[1:]) if repeat > 1 else None
    return Size(n, runs[0][0], rerun, min(p for _, p in runs))


def table(sizes: Sequence[Size], forks: str) -> list[str]:
    """The Markdown table: each size's wall times and their ratios."""
    lines = [
        f"| hosts | passed | preflight first run (forks {forks}) | re-run | re-run / first "
        "| per host | per extra host |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base = sizes[0]
    for size in sizes:
        rerun = f"{size.rerun:.1f} s | {size.rerun / size.first:.2f}" if size.rerun is not None else "- | -"
        extra = size.hosts - base.hosts
        per_extra = f"{(size.first - base.first) / extra:.2f} s" if extra > 0 else "-"
        lines.append(
            f"| {size.hosts} | {size.passed} | {size.first:.1f} s | {rerun} "
            f"| {size.first / size.hosts:.2f} s | {per_extra} |"
        )
    return lines


def arguments() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[1, 10, 50, 100])
    parser.add_argument("--profile", default="h200x1")
    parser.add_argument("--forks", type=int, help="ANSIBLE_FORKS for the runs (default: ansible.cfg's)")
    parser.add_argument(
        "--repeat", type=int, default=2, help="runs per size: the first, then re-runs (median)"
    )
    parser.add_argument("--png", type=Path, default=PNG, help=f"the plot (default {PNG.relative_to(ROOT)})")
    parser.add_argument("--state-dir", type=Path, help="the light lab's state folder (default: a fresh one)")
    parser.add_argument(
        "--beside-a-lab", action="store_true", help="measure though a lab is up (it shares the machine)"
    )
    return parser.parse_args()


def main() -> int:
    args = arguments()
    if not args.beside_a_lab:
        refuse_a_running_lab()
    wanted = sorted(set(args.hosts))
    if args.forks:
        os.environ["ANSIBLE_FORKS"] = str(args.forks)
    with (
        tempfile.TemporaryDirectory(prefix="gpurack-bench-scale.") as scratch,
        light_lab(wanted[-1], args.profile, args.state_dir or Path(scratch)) as (env, up),
    ):
        sizes = [measure(n, args.repeat, env) for n in wanted]
    forks = str(args.forks or "ansible.cfg")
    print(f"lab up --light {wanted[-1]}: {up:.1f} s ({os.cpu_count()} cores, profile {args.profile})\n")
    print("\n".join(table(sizes, forks)))
    title = f"preflight on light lab hosts ({args.profile}, forks {forks}, {os.cpu_count()} cores)"
    reruns = [(s.hosts, s.rerun) for s in sizes if s.rerun is not None]
    path = plot_scale(args.png, [(s.hosts, s.first) for s in sizes], reruns, title=title)
    print(f"\nplot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
