"""`gpurack facts`: print a node's hardware facts and derived labels."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpurack import config, facts, render
from gpurack.commands import Subparsers
from gpurack.errors import ExitCode


def add_origin_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the --from-capture DIR | --local choice to a subcommand."""
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--from-capture", metavar="DIR", help="read a capture bundle folder")
    where.add_argument("--local", action="store_true", help="read this machine")
    parser.add_argument("--pool", type=Path, metavar="FILE", help="pool YAML: name, workload, sharing")


def origin_from_args(args: argparse.Namespace) -> facts.Origin:
    """The Origin chosen by --from-capture DIR or --local."""
    if args.from_capture is not None:
        return facts.Origin("capture", Path(args.from_capture).resolve())
    return facts.Origin("local", Path("/"))


def register(subparsers: Subparsers) -> None:
    """Add `gpurack facts` to the CLI."""
    parser = subparsers.add_parser("facts", help="print a node's hardware facts and derived labels")
    add_origin_arguments(parser)
    parser.add_argument("--format", choices=("json", "yaml", "table"), default="table")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run `gpurack facts`."""
    node = facts.read_node(origin_from_args(args), config.load_pool(args.pool))
    for warning in node.warnings:
        render.warning(warning)
    if args.format == "json":
        render.json_out(node.as_dict())
    elif args.format == "yaml":
        render.yaml_out(node.as_dict())
    else:
        render.facts_tables(node.host, node.facts, node.labels)
    return ExitCode.OK
