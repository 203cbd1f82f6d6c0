"""What the lab benchmarks share: the checkout's driver, running it timed, the refusal to
start beside a lab that is up (the benchmarks bring up and remove their own), and their tables."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GPURACK = ROOT / ".venv" / "bin" / "gpurack"


def gpurack(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Run `gpurack ARGV`; return its wall time and stdout, or exit when it fails."""
    start = time.monotonic()
    done = subprocess.run([str(GPURACK), *argv], env=env, capture_output=True, text=True, check=False)
    took = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"bench: gpurack {' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-600:]}")
    return took, done.stdout


def refuse_a_running_lab() -> None:
    """Exit when a lab is up: the benchmark would measure, or remove, someone else's."""
    running = subprocess.run(
        ["docker", "ps", "-q", "--filter", "label=io.gpurack.lab"],
        capture_output=True,
        text=True,
        check=False,
    )
    if running.stdout.strip():
        sys.exit("bench: a lab is up; run 'gpurack lab down' first")


def print_table(title: str, rows: list[tuple[str, str]]) -> None:
    """A Markdown table of (figure, value) rows under a title line."""
    print(f"{title}\n")
    print("| figure | value |")
    print("|---|---:|")
    for what, value in rows:
        print(f"| {what} | {value} |")
