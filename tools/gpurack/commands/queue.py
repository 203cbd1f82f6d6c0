"""`gpurack queue`: each team's Kueue queues, usage against quota, and why each pending workload waits."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path
from typing import Any

from gpurack import ansible_inventory, project, queue, render
from gpurack.commands import Subparsers
from gpurack.errors import ExitCode, UsageError
from gpurack.queue import QueueStatus


def register(subparsers: Subparsers) -> None:
    """Add `gpurack queue` to the CLI."""
    parser = subparsers.add_parser(
        "queue", help="Kueue queues, usage against quota and why pending workloads wait"
    )
    parser.add_argument("-i", "--inventory", help="inventory whose gpurack_kubeconfig names the cluster")
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        metavar="PATH",
        help="admin kubeconfig (default: the inventory's gpurack_kubeconfig, "
        "else ~/.kube/gpurack-kubernetes.conf)",
    )
    parser.add_argument(
        "--prometheus",
        metavar="URL",
        help="also show Kueue's pending-workload gauge from the Prometheus at URL (http://HOST:9090)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(handler=handle)


def kubeconfig(given: Path | None, inventory: str | None) -> Path:
    """--kubeconfig, else the inventory's `gpurack_kubeconfig`, else the default (as node_labels does).

    Raises:
        UsageError: the inventory is missing or unreadable, or its gpurack_kubeconfig is not a string.
    """
    if given is not None:
        return given.expanduser()
    if inventory is not None:
        value = ansible_inventory.inventory_variable(
            project.resolve_inventory(inventory), "gpurack_kubeconfig"
        )
        if value is not None:
            if not isinstance(value, str) or not value:
                raise UsageError(f"gpurack_kubeconfig in {inventory} is not a path: {value!r}")
            return Path(value).expanduser()
    return queue.DEFAULT_KUBECONFIG.expanduser()


def status_json(status: QueueStatus) -> dict[str, Any]:
    """The machine form of `gpurack queue --json`: the records as they are, quantities in base units."""
    return asdict(status)


def handle(args: argparse.Namespace) -> int:
    """Run `gpurack queue`; exit 0 whatever waits, 2 when the cluster or Prometheus cannot be reached."""
    status = queue.load(kubeconfig(args.kubeconfig, args.inventory), args.prometheus)
    if args.json:
        render.json_out(status_json(status))
    else:
        render.queue_status(status)
    return ExitCode.OK
