"""`gpurack validate`: check a node against its pool's expectations; exit 1 when a check failed."""

from __future__ import annotations

import argparse
from pathlib import Path

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import TIERS

from gpurack import config, facts, inventory, outfile, render, validate
from gpurack.commands import Subparsers
from gpurack.commands.facts import add_origin_arguments, origin_from_args
from gpurack.commands.recording import add_record_options, record_or_warn


def register(subparsers: Subparsers) -> None:
    """Add `gpurack validate` to the CLI."""
    parser = subparsers.add_parser("validate", help="check a node against its pool's expectations")
    add_origin_arguments(parser)
    parser.add_argument("--expect", type=Path, metavar="FILE", help="gpurack_expect YAML or group_vars")
    parser.add_argument("--tier", choices=TIERS, default="quick", help="check level to run (default quick)")
    parser.add_argument(
        "--duration",
        type=float,
        default=validate.DEFAULT_BURN_IN_S,
        metavar="SECONDS",
        help=f"burn-in length (default {validate.DEFAULT_BURN_IN_S:g})",
    )
    parser.add_argument("--json", action="store_true", help="print the machine-readable result")
    parser.add_argument(
        "--output", type=Path, metavar="DIR", help=f"write {validate.REPORT_JSON}, {validate.REPORT_MD}"
    )
    parser.add_argument("--force", action="store_true", help="replace reports already in the --output folder")
    add_record_options(parser, "the result")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run `gpurack validate`; the exit code says pass (0) or fail (1), whatever the inventory does.

    Reports are printed and written first, then recorded: a database failure is a warning.
    """
    # Expectations and the --db URL are checked before any hardware is read: a typo is a usage
    # error, not a verdict.
    expect = config.load_expect(args.expect)
    pool = config.load_pool(args.pool)
    if not args.no_record:
        inventory.check_database(args.db)
    if args.output is not None and not args.force:
        outfile.refuse_existing(list(validate.report_paths(args.output)))
    node = facts.read_node(origin_from_args(args), pool)
    validation = validate.validate(
        node, expect, args.tier, burn_in_s=args.duration, pool=pool, expect_file=args.expect
    )
    if args.output is not None:
        validate.write_reports(validation, args.output, force=args.force)
    if args.json:
        render.json_out(validation.as_dict())
    else:
        render.results_table(node.host, validation.result_dicts(), validation.summary)
    if not args.no_record:
        record_or_warn(lambda: validate.record(validation, pool, args.db))
    if validation.not_assessed:
        render.warning(f"could not assess {node.host}: {validation.not_assessed}")
    return validation.exit_code
