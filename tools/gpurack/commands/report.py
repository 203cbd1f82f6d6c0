"""`gpurack report RUN`: write one inventory run's report as Markdown, HTML and JSON (a
window's cost is `gpurack cost`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpurack import render, report
from gpurack.errors import ExitCode
from gpurack.inventory import open_store


def _run_arg(text: str) -> int | None:
    if text == "latest":
        return None
    if text.isdigit() and int(text) > 0:
        return int(text)
    hint = " (a window's cost is 'gpurack cost')" if text == "cost" else ""
    raise argparse.ArgumentTypeError(f"RUN must be a run id or 'latest', got {text!r}{hint}")


def formats_arg(text: str) -> tuple[str, ...]:
    """`md,html,json` (any of them, in any order) as a tuple of report formats."""
    formats = tuple(dict.fromkeys(f.strip() for f in text.split(",") if f.strip()))
    unknown = [f for f in formats if f not in report.FORMATS]
    if unknown or not formats:
        raise argparse.ArgumentTypeError(
            f"unknown format {', '.join(unknown) or repr(text)} (choose from {', '.join(report.FORMATS)})"
        )
    return formats


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `gpurack report` to the CLI."""
    parser = subparsers.add_parser("report", help="write a run's report: Markdown, HTML and JSON")
    parser.add_argument("run", type=_run_arg, metavar="RUN", help="run id from the inventory, or 'latest'")
    add_document_arguments(parser, "report", "./gpurack-report-run-N")
    parser.set_defaults(handler=handle)


def add_document_arguments(parser: argparse.ArgumentParser, kind: str, default_folder: str) -> None:
    """--db, --output, --force and --format: where a document is read from and written to
    (`gpurack report` and `gpurack cost`)."""
    parser.add_argument(
        "--db", metavar="URL", help="inventory database (default: $GPURACK_DB, else the SQLite file)"
    )
    parser.add_argument(
        "--output", type=Path, metavar="DIR", help=f"folder for the files (default: {default_folder})"
    )
    parser.add_argument(
        "--force", action="store_true", help=f"replace {kind} files already in the folder (default: refuse)"
    )
    parser.add_argument(
        "--format",
        dest="formats",
        type=formats_arg,
        default=report.FORMATS,
        metavar="md,html,json",
        help="which documents to write (default: all three)",
    )


def handle(args: argparse.Namespace) -> int:
    """Run `gpurack report RUN`; exit 0 once the files are written, whatever the verdicts.

    An earlier report in the folder is kept (exit 64) unless `--force` is given.
    """
    with open_store(args.db, create=False) as store:
        view = store.run(args.run)
    doc = report.build(view)
    folder = args.output if args.output is not None else Path(f"gpurack-report-run-{view.run_id}")
    for path in report.write(doc, folder, args.formats, force=args.force):
        render.line(str(path))
    return ExitCode.OK
