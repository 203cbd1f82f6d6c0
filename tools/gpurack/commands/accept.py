"""`gpurack accept`: the seed's acceptance test against a team's queue; exit 1 on a failed row."""

from __future__ import annotations

import argparse

from gpurack import acceptance, render
from gpurack.commands import Subparsers, cluster_test
from gpurack.commands.recording import record_or_warn
from gpurack.errors import UsageError


def register(subparsers: Subparsers) -> None:
    """Add `gpurack accept` to the CLI."""
    parser = subparsers.add_parser(
        "accept",
        help="the acceptance test: a queued training job with data from the object store, its "
        "all-reduce, a fixed window, checkpoint, a deleted pod and the restore, labels and cost",
    )
    cluster_test.add_options(
        parser,
        "the team whose queue runs it (default: the first of gpurack_teams)",
        "acceptance_* or inference_acceptance_*",
    )
    parser.add_argument(
        "--inference",
        action="store_true",
        help="the inference test instead: a team's model server started cold and warm, loaded at two "
        "levels, rolled out and scaled under load, loaded beside training, and its cost per 1,000 "
        "requests (--team: the team that serves; default the first)",
    )
    parser.add_argument("--service", help="with --inference: the team's service (default its first)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run `gpurack accept`: 0 when no row failed, 1 when one did, 2 when no rows were made."""
    test = acceptance.INFERENCE if args.inference else acceptance.TRAINING
    if args.service and not args.inference:
        raise UsageError("--service names an inference service: give --inference too")
    service = {"inference_acceptance_service": args.service} if args.service else {}
    request, runs_dir = cluster_test.request(args, test.playbook, f"{test.prefix}_team", service)
    if args.json:
        result = acceptance.run(request, runs_dir, test=test)
        render.json_out(result.as_dict())
    else:
        result = acceptance.run(request, runs_dir, render.task_event, test)
        render.acceptance_report(result.as_dict())
    if not args.no_record:
        record_or_warn(lambda: acceptance.record(result, args.db))
    return int(result.exit_code)
