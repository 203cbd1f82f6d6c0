"""`gpurack accept`: the seed's acceptance test against a team's queue; exit 1 on a failed row."""

from __future__ import annotations

import argparse

from gpurack import acceptance, inventory, project, render, runner
from gpurack.commands import Subparsers
from gpurack.commands.recording import add_extra_vars, add_record_options, record_or_warn
from gpurack.errors import UsageError
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
    parser.add_argument(
        "--inference",
        action="store_true",
        help="the inference test instead: a team's model server started cold and warm, loaded at two "
        "levels, rolled out and scaled under load, loaded beside training, and its cost per 1,000 "
        "requests (--team: the team that serves; default the first)",
    )
    parser.add_argument("--service", help="with --inference: the team's service (default its first)")
    add_extra_vars(parser, " (acceptance_* or inference_acceptance_* variables)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    add_record_options(parser, "the run")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run `gpurack accept`: 0 when no row failed, 1 when one did, 2 when no rows were made."""
    if not args.no_record:
        inventory.check_database(args.db)
    extravars = runner.parse_extravars(args.extra_vars)
    test = acceptance.INFERENCE if args.inference else acceptance.TRAINING
    if args.service and not args.inference:
        raise UsageError("--service names an inference service: give --inference too")
    if args.team:
        extravars[f"{test.prefix}_team"] = args.team
    if args.service:
        extravars["inference_acceptance_service"] = args.service
    request = RunRequest(
        playbook=project.resolve_playbook(test.playbook.removesuffix(".yml")),
        inventory=project.resolve_inventory(args.inventory),
        extravars=extravars,
    )
    runs_dir = project.state_dir() / "runs"
    if args.json:
        result = acceptance.run(request, runs_dir, test=test)
        render.json_out(result.as_dict())
    else:
        result = acceptance.run(request, runs_dir, render.task_event, test)
        render.acceptance_report(result.as_dict())
    if not args.no_record:
        record_or_warn(lambda: acceptance.record(result, args.db))
    return int(result.exit_code)
