"""`gpurack cost`: what a window of the cluster cost, by the seed's formula, as cost.md,
cost.html and cost.json with their charts."""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gpurack import cost, project, render
from gpurack.commands.queue import kubeconfig
from gpurack.commands.report import add_document_arguments
from gpurack.errors import ExitCode, UsageError
from gpurack.report import cost_page

_AGO = re.compile(r"^(\d{1,18})([mhd])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days"}
DEFAULT_SPAN = timedelta(days=7)


def _back(moment: datetime, span: timedelta) -> datetime:
    """`moment - span`, refused when that is before the year 1."""
    try:
        return moment - span
    except OverflowError:
        raise UsageError(f"{span.days} days before {moment.date()} is before the year 1") from None


def moment(text: str, now: datetime) -> datetime:
    """An ISO 8601 date or time (UTC when it names no zone), or `30m`, `12h`, `7d` before now.

    Raises:
        UsageError: neither.
    """
    ago = _AGO.match(text.strip())
    if ago:
        try:
            span = timedelta(**{_UNITS[ago.group(2)]: int(ago.group(1))})
        except OverflowError:
            raise UsageError(f"{text.strip()} ago is before the year 1") from None
        return _back(now, span)
    try:
        parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"not a time: {text!r} (an ISO 8601 date or time such as 2026-12-01T08:00Z, or 30m, 12h, 7d ago)"
        ) from None
    try:
        return parsed.astimezone(UTC) if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    except OverflowError:
        raise UsageError(f"not a time: {text!r} is outside the years 1 to 9999 in UTC") from None


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `gpurack cost` to the CLI."""
    parser = subparsers.add_parser(
        "cost", help="a window's cost per accepted unit, with charts: Markdown, HTML and JSON"
    )
    parser.add_argument(
        "-i", "--inventory", required=True, help="inventory with the pools' prices and the site's costs"
    )
    parser.add_argument(
        "--since",
        help="window start: ISO 8601 time (UTC by default), or 30m, 12h, 7d ago (default: 7d before --until)",
    )
    parser.add_argument("--until", help="window end, as --since (default: now)")
    parser.add_argument(
        "--kueue",
        action="store_true",
        help="also count the GPU Workloads Kueue holds in the cluster, beside the recorded acceptance runs",
    )
    parser.add_argument("--kubeconfig", type=Path, metavar="PATH", help="with --kueue: the admin kubeconfig")
    add_document_arguments(parser, "cost", "./gpurack-cost")
    parser.set_defaults(handler=handle)


def now() -> datetime:
    """The time a window ends at by default, and relative times count back from."""
    return datetime.now(UTC)


def query(args: argparse.Namespace, at: datetime) -> cost.CostQuery:
    """The window and sources the arguments name.

    Raises:
        UsageError: a malformed time, or --kubeconfig without --kueue.
    """
    if args.kubeconfig is not None and not args.kueue:
        raise UsageError("--kubeconfig: only with --kueue (the cluster is read for its Workloads only)")
    until = moment(args.until, at) if args.until else at
    since = moment(args.since, at) if args.since else _back(until, DEFAULT_SPAN)
    return cost.CostQuery(
        since=since,
        until=until,
        inventory=project.resolve_inventory(args.inventory),
        db=args.db,
        kueue_kubeconfig=kubeconfig(args.kubeconfig, args.inventory) if args.kueue else None,
    )


def handle(args: argparse.Namespace) -> int:
    """Write cost.md, cost.html, cost.json and the charts; print their paths and the summary.

    Earlier cost files in the folder are kept (exit 64) unless `--force` is given.
    """
    at = now()
    doc = cost.window_cost(query(args, at), at)
    folder = args.output if args.output is not None else Path("gpurack-cost")
    for path in cost_page.write(doc, folder, args.formats, force=args.force):
        render.line(str(path))
    render.line(cost_page.summary_line(doc))
    return ExitCode.OK
