"""`gpurack fabric check`: the inventory's switches against its cabling plan; exit 1 on a failure."""

from __future__ import annotations

import argparse
from pathlib import Path

from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch import netmiko_connect

from gpurack import fabric, inventory, render
from gpurack.commands import Subparsers
from gpurack.commands.recording import add_record_options, record_or_warn
from gpurack.errors import UsageError

DEFAULT_TIMEOUT_S = 30


def register(subparsers: Subparsers) -> None:
    """Add `gpurack fabric check` to the CLI."""
    parser = subparsers.add_parser("fabric", help="the top-of-rack switches against the cabling plan")
    verbs = parser.add_subparsers(title="verbs", metavar="VERB", required=True)
    check = verbs.add_parser(
        "check",
        help="read every switch of tor_switches over SSH at once; check each server's cabling, "
        "port state, MTU, speed, errors and RoCE settings",
    )
    check.add_argument("-i", "--inventory", type=Path, required=True, metavar="INVENTORY")
    check.add_argument(
        "--timeout",
        type=int,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"for each switch's connect, login and command (default {DEFAULT_TIMEOUT_S})",
    )
    check.add_argument("--json", action="store_true", help="print the machine-readable result")
    add_record_options(check, "what was seen")
    check.set_defaults(handler=handle_check)


def handle_check(args: argparse.Namespace) -> int:
    """Run `gpurack fabric check`; exit 1 when a server fails a check, as `gpurack validate`."""
    if not 1 <= args.timeout <= 600:
        raise UsageError(f"--timeout must be 1 to 600 seconds, got {args.timeout}")
    if not args.no_record:
        inventory.check_database(args.db)
    plan, targets = fabric.load(args.inventory, float(args.timeout))
    with render.progress("reading switches", len(targets)) as step:
        result = fabric.check(args.inventory, plan, targets, netmiko_connect, on_done=step)
    if args.json:
        render.json_out(result.as_dict())
    else:
        render.fabric_report(result.as_dict())
    if not args.no_record:
        record_or_warn(lambda: fabric.record(result, args.db))
    if result.not_assessed:
        render.warning(f"could not assess the fabric: {result.not_assessed}")
    return int(result.exit_code)
