"""`gpurack run`: run a playbook with live progress and a recap (and, for a patch run, what it did
to each host); keep what each host showed."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpurack import harvest, inventory, project, render, runner
from gpurack.commands import Subparsers
from gpurack.commands.recording import add_extra_vars, add_record_options, record_or_warn
from gpurack.runner import RunRequest


def register(subparsers: Subparsers) -> None:
    """Add `gpurack run` to the CLI."""
    parser = subparsers.add_parser("run", help="run a playbook with live progress and a recap")
    parser.add_argument("playbook", help="playbook path, or a name under playbooks/ (e.g. preflight)")
    parser.add_argument("-i", "--inventory", required=True, help="inventory file or folder")
    parser.add_argument("-l", "--limit", help="further limit the hosts (ansible --limit)")
    parser.add_argument("-C", "--check", action="store_true", help="check mode: change nothing")
    parser.add_argument("-D", "--diff", action="store_true", help="show file and template diffs")
    parser.add_argument("-t", "--tags", help="only run tasks with these tags")
    add_extra_vars(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON instead of a recap")
    add_record_options(parser, "host facts")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run `gpurack run`; the exit code says ok (0), failed (1) or unreachable (2).

    The recap is printed before the hosts are recorded: a database failure is a warning.
    """
    if not args.no_record:
        inventory.check_database(args.db)  # a bad --db is a usage error before any host changes
    request = RunRequest(
        playbook=project.resolve_playbook(args.playbook),
        inventory=project.resolve_inventory(args.inventory),
        limit=args.limit,
        check=args.check,
        diff=args.diff,
        tags=args.tags,
        extravars=runner.parse_extravars(args.extra_vars),
    )
    runs_dir = project.state_dir() / "runs"
    if args.json:
        result = runner.run_playbook(request, runs_dir)
        render.json_out(runner.result_dict(result))
    else:
        result = runner.run_playbook(request, runs_dir, render.task_event)
        render.run_recap(result)
        patches = harvest.patch_outcomes(result.artifact_dir)
        if patches:
            render.patch_outcomes(patches)
    if not args.no_record:
        record_or_warn(
            lambda: harvest.record_run(
                result.artifact_dir, Path(request.playbook).name, result.status, args.db
            )
        )
    return result.exit_code
