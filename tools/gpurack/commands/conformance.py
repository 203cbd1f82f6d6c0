"""`gpurack conformance`: the CNCF Kubernetes AI Conformance tests that can run on the cluster,
and their evidence (PRODUCT.yaml, junit.xml, evidence/<id>.md); exit 1 on a failed test."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml

from gpurack import conformance, inventory, project, render, runner
from gpurack.commands import Subparsers
from gpurack.commands.recording import add_extra_vars, add_record_options, record_or_warn
from gpurack.errors import UsageError
from gpurack.runner import RunRequest


def register(subparsers: Subparsers) -> None:
    """Add `gpurack conformance` to the CLI."""
    parser = subparsers.add_parser(
        "conformance",
        help="the CNCF Kubernetes AI Conformance tests that can run on the cluster, written as "
        "PRODUCT.yaml (each requirement's status and evidence) and JUnit XML",
    )
    parser.add_argument("-i", "--inventory", required=True, help="inventory file or folder")
    parser.add_argument("--output", type=Path, required=True, metavar="DIR", help="folder for the evidence")
    parser.add_argument("--force", action="store_true", help="replace evidence files already in the folder")
    parser.add_argument(
        "--team", help="the team whose namespace and queue run the tests (default: the first)"
    )
    parser.add_argument(
        "--only", action="append", default=[], metavar="ID", help="test only this requirement id; repeatable"
    )
    parser.add_argument(
        "--metadata",
        type=Path,
        metavar="FILE",
        help="YAML mapping for PRODUCT.yaml's metadata (vendor, URLs)",
    )
    add_extra_vars(parser, " (conformance_* variables)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    add_record_options(parser, "the run")
    parser.set_defaults(handler=handle)


def _metadata(path: Path | None) -> dict[str, Any]:
    """The operator's PRODUCT.yaml metadata.

    Raises:
        UsageError: the file cannot be read or is not a YAML mapping.
    """
    if path is None:
        return {}
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise UsageError(f"--metadata {path}: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"--metadata {path}: not a YAML mapping")
    return {str(k): v for k, v in data.items()}


def handle(args: argparse.Namespace) -> int:
    """Run `gpurack conformance`: 0 when no test failed, 1 when one did, 2 when none could run."""
    if not args.no_record:
        inventory.check_database(args.db)
    metadata = _metadata(args.metadata)
    extravars = runner.parse_extravars(args.extra_vars)
    if args.team:
        extravars["conformance_team"] = args.team
    if args.only:
        extravars["conformance_only"] = conformance.check_only(list(args.only))
    request = RunRequest(
        playbook=project.resolve_playbook(conformance.PLAYBOOK.removesuffix(".yml")),
        inventory=project.resolve_inventory(args.inventory),
        extravars=extravars,
    )
    runs_dir = project.state_dir() / "runs"
    found = conformance.run(request, runs_dir, None if args.json else render.task_event)
    written = conformance.write(found, args.output, metadata, force=args.force)
    if args.json:
        render.json_out({**found.as_dict(), "files": [str(p) for p in written]})
    else:
        render.conformance_report(found.as_dict())
        for path in written:
            render.line(str(path))
    if not args.no_record:
        record_or_warn(lambda: conformance.record(found, args.db))
    return int(found.exit_code)
