"""`gpurack conformance`: the CNCF Kubernetes AI Conformance tests that can run on the cluster,
and their evidence (PRODUCT.yaml, junit.xml, evidence/<id>.md); exit 1 on a failed test."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml

from gpurack import conformance, render
from gpurack.commands import Subparsers, cluster_test
from gpurack.commands.recording import record_or_warn
from gpurack.errors import UsageError


def register(subparsers: Subparsers) -> None:
    """Add `gpurack conformance` to the CLI."""
    parser = subparsers.add_parser(
        "conformance",
        help="the CNCF Kubernetes AI Conformance tests that can run on the cluster, written as "
        "PRODUCT.yaml (each requirement's status and evidence) and JUnit XML",
    )
    cluster_test.add_options(
        parser, "the team whose namespace and queue run the tests (default: the first)", "conformance_*"
    )
    parser.add_argument("--output", type=Path, required=True, metavar="DIR", help="folder for the evidence")
    parser.add_argument("--force", action="store_true", help="replace evidence files already in the folder")
    parser.add_argument(
        "--only", action="append", default=[], metavar="ID", help="test only this requirement id; repeatable"
    )
    parser.add_argument(
        "--metadata",
        type=Path,
        metavar="FILE",
        help="YAML mapping for PRODUCT.yaml's metadata (vendor, URLs)",
    )
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
    metadata = _metadata(args.metadata)
    only = {"conformance_only": conformance.check_only(list(args.only))} if args.only else {}
    request, runs_dir = cluster_test.request(args, conformance.PLAYBOOK, "conformance_team", only)
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
