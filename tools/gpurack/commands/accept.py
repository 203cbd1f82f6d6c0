"""`gpurack accept`: the seed's acceptance test against a team's queue; exit 1 on a failed row."""

from __future__ import annotations

import argparse

from gpurack import acceptance, inventory, project, render, runner
from gpurack.commands import Subparsers
from gpurack.commands.recording import add_extra_vars, add_record_options, record_or_warn
from gpurack.runner import RunRequest


def register(subparsers: Subparsers) -> None:
    """Add `gpurack accept` to the CLI."""
    parser = subparsers.add_parser(
        "accept",
        help="the acceptance test: a queued training job with data from the object store, its "
        "all-reduce, a fixed window, checkpoint, a deleted pod and the restore, labels and cost",
    )
    parser.add_argument("-i", "--inventory", required=True, help="inventory file or folder")
    parser.add_argument("--team", help="the team whose queue runs it (default: the first of gpurack_teams)")
    add_extra_vars(parser, " (acceptance_* variables)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    add_record_options(parser, "the run")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run `gpurack accept`: 0 when no row failed, 1 when one did, 2 when no rows were made."""
    if not args.no_record:
        inventory.check_database(args.db)
    extravars = runner.parse_extravars(args.extra_vars)
    if args.team:
        extravars["acceptance_team"] = args.team
    request = RunRequest(
        playbook=project.resolve_playbook(acceptance.PLAYBOOK.removesuffix(".yml")),
        inventory=project.resolve_inventory(args.inventory),
        extravars=extravars,
    )
    runs_dir = project.state_dir() / "runs"
    if args.json:
        result = acceptance.run(request, runs_dir)
        render.json_out(result.as_dict())
    else:
        result = acceptance.run(request, runs_dir, render.task_event)
        render.acceptance_report(result.as_dict())
    if not args.no_record:
        record_or_warn(lambda: acceptance.record(result, args.db))
    return int(result.exit_code)
