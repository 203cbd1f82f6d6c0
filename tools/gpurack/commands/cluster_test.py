"""What `accept` and `conformance` share (a helper, not a verb): both run a playbook of tests
against the cluster in one team's namespace, print its report as tables or JSON and keep it in
the inventory, so both take the same options and build their run the same way."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpurack import inventory, project, runner
from gpurack.commands.recording import add_extra_vars, add_record_options
from gpurack.runner import RunRequest


def add_options(parser: argparse.ArgumentParser, team_help: str, variables: str) -> None:
    """-i, --team, -e (`variables`: which role variables it sets), --json, --db and --no-record."""
    parser.add_argument("-i", "--inventory", required=True, help="inventory file or folder")
    parser.add_argument("--team", help=team_help)
    add_extra_vars(parser, f" ({variables} variables)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    add_record_options(parser, "the run")


def request(
    args: argparse.Namespace, playbook: str, team_var: str, extravars: Mapping[str, Any] | None = None
) -> tuple[RunRequest, Path]:
    """The run of `playbook` (its file name, `accept.yml`) on the inventory of -i, with -e's variables,
    --team as `team_var` and the command's own `extravars`; and the folder for its run files.
    The database is checked first when the run will be recorded, so a bad --db fails before
    the tests run, not after.

    Raises:
        UsageError: an unusable database, -e value, inventory or playbook.
    """
    if not args.no_record:
        inventory.check_database(args.db)
    variables = runner.parse_extravars(args.extra_vars)
    if args.team:
        variables[team_var] = args.team
    variables.update(extravars or {})
    run = RunRequest(
        playbook=project.resolve_playbook(playbook.removesuffix(".yml")),
        inventory=project.resolve_inventory(args.inventory),
        extravars=variables,
    )
    return run, project.state_dir() / "runs"
