"""`gpurack report RUN`: write one inventory run's report as Markdown, HTML and JSON;
`gpurack report cost`: what a window of the cluster cost, by the seed's formula."""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance import (
    VARIABLE as ACCEPTANCE_VARIABLE,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance import SettingsError, read_settings
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost import Baseline, Window

from gpurack import ansible_inventory, cost_inventory, project, queue, render, report
from gpurack.commands.queue import kubeconfig
from gpurack.errors import ExitCode, UsageError
from gpurack.inventory import open_store
from gpurack.report import cost, cost_page

COST = "cost"
_AGO = re.compile(r"^(\d{1,18})([mhd])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days"}
DEFAULT_SPAN = timedelta(days=7)


def _run_arg(text: str) -> int | str | None:
    if text == "latest":
        return None
    if text == COST:
        return COST
    if text.isdigit() and int(text) > 0:
        return int(text)
    raise argparse.ArgumentTypeError(f"RUN must be a run id, 'latest' or 'cost', got {text!r}")


def _formats_arg(text: str) -> tuple[str, ...]:
    formats = tuple(dict.fromkeys(f.strip() for f in text.split(",") if f.strip()))
    unknown = [f for f in formats if f not in report.FORMATS]
    if unknown or not formats:
        raise argparse.ArgumentTypeError(
            f"unknown format {', '.join(unknown) or repr(text)} (choose from {', '.join(report.FORMATS)})"
        )
    return formats


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
    """Add `gpurack report` to the CLI."""
    parser = subparsers.add_parser(
        "report", help="write a run's report, or a window's cost ('report cost'): Markdown, HTML and JSON"
    )
    parser.add_argument(
        "run",
        type=_run_arg,
        metavar="RUN",
        help="run id from the inventory, 'latest', or 'cost' (a window's cost)",
    )
    parser.add_argument(
        "--db", metavar="URL", help="inventory database (default: $GPURACK_DB, else the SQLite file)"
    )
    parser.add_argument(
        "--output",
        type=Path,
        metavar="DIR",
        help="folder for the files (default: ./gpurack-report-run-N, ./gpurack-cost)",
    )
    parser.add_argument(
        "--force", action="store_true", help="replace report files already in the folder (default: refuse)"
    )
    parser.add_argument(
        "--format",
        dest="formats",
        type=_formats_arg,
        default=report.FORMATS,
        metavar="md,html,json",
        help="which documents to write (default: all three)",
    )
    costing = parser.add_argument_group("report cost")
    costing.add_argument("-i", "--inventory", help="inventory with the pools' prices and the site's costs")
    costing.add_argument(
        "--since",
        help="window start: ISO 8601 time (UTC by default), or 30m, 12h, 7d ago (default: 7d before --until)",
    )
    costing.add_argument("--until", help="window end, as --since (default: now)")
    costing.add_argument(
        "--kueue",
        action="store_true",
        help="also count the GPU Workloads Kueue holds in the cluster, beside the recorded acceptance runs",
    )
    costing.add_argument("--kubeconfig", type=Path, metavar="PATH", help="with --kueue: the admin kubeconfig")
    parser.set_defaults(handler=handle)


def _cost_only(args: argparse.Namespace) -> None:
    given = [f"--{name}" for name in ("inventory", "since", "until", "kubeconfig") if getattr(args, name)]
    given += ["--kueue"] if args.kueue else []
    if given:
        raise UsageError(f"{', '.join(given)}: only with 'gpurack report cost'")


def handle(args: argparse.Namespace) -> int:
    """Run `gpurack report RUN|cost`; exit 0 once the files are written, whatever the verdicts.

    An earlier report in the folder is kept (exit 64) unless `--force` is given.
    """
    if args.run == COST:
        return handle_cost(args)
    _cost_only(args)
    with open_store(args.db, create=False) as store:
        view = store.run(args.run)
    doc = report.build(view)
    folder = args.output if args.output is not None else Path(f"gpurack-report-run-{view.run_id}")
    for path in report.write(doc, folder, args.formats, force=args.force):
        render.line(str(path))
    return ExitCode.OK


def _baseline(inventory: Path) -> Baseline | None:
    value = ansible_inventory.inventory_variable(inventory, ACCEPTANCE_VARIABLE)
    try:
        return read_settings(value).baseline
    except SettingsError as error:
        raise UsageError(f"{inventory}: {error}") from None


def cost_document(args: argparse.Namespace, at: datetime) -> dict[str, Any]:
    """The cost document of the window the arguments give.

    Raises:
        UsageError: no inventory, a malformed time or window, or inputs that cannot be costed.
        NotAssessedError: with --kueue, the cluster cannot be read.
    """
    if not args.inventory:
        raise UsageError("gpurack report cost needs -i INVENTORY (the pools' prices and the site's costs)")
    inventory = project.resolve_inventory(args.inventory)
    until = moment(args.until, at) if args.until else at
    since = moment(args.since, at) if args.since else _back(until, DEFAULT_SPAN)
    if since >= until:
        raise UsageError(f"--since ({since.isoformat()}) must be before --until ({until.isoformat()})")
    inputs = cost_inventory.read(inventory)
    baseline = _baseline(inventory)
    with open_store(args.db, create=False) as store:
        runs = store.acceptance_runs(since, until)
        first = store.first_recorded()
    jobs = cost.from_runs(runs)
    sources = [cost.SOURCE_ACCEPTANCE]
    if args.kueue:
        workloads = queue.fetch(kubeconfig(args.kubeconfig, args.inventory)).workloads
        jobs += cost.from_workloads(workloads, {view.record.name for view in runs}, at)
        sources.append(cost.SOURCE_KUEUE)
    starts = [moment for moment in (first, *(job.allocation.start for job in jobs)) if moment is not None]
    window, clipped = cost.observed(Window(since, until), at, min(starts, default=None))
    return cost.build(window, inputs, jobs, baseline, sources, clipped=clipped)


def now() -> datetime:
    """The time a window ends at by default, and relative times count back from."""
    return datetime.now(UTC)


def handle_cost(args: argparse.Namespace) -> int:
    """Write cost.md, cost.html, cost.json and the charts; print their paths and the summary."""
    doc = cost_document(args, now())
    folder = args.output if args.output is not None else Path("gpurack-cost")
    for path in cost_page.write(doc, folder, args.formats, force=args.force):
        render.line(str(path))
    render.line(cost_page.summary_line(doc))
    return ExitCode.OK
