"""`gpurack inventory list | show | history | diff | outliers | export`: read the node inventory."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

from gpurack import outfile, render
from gpurack.commands import Subparsers
from gpurack.errors import ExitCode, UsageError
from gpurack.inventory import (
    Comparison,
    DamagedRowsError,
    HistoryEntry,
    Homogeneity,
    NodeSummary,
    SnapshotView,
    Store,
    homogeneity,
    open_store,
)

T = TypeVar("T")


def register(subparsers: Subparsers) -> None:
    """Add `gpurack inventory` and its verbs to the CLI."""
    parser = subparsers.add_parser("inventory", help="nodes seen by past runs, their history and drift")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db",
        metavar="URL",
        help="database: a SQLite path, sqlite:///PATH or postgresql://USER@HOST/DB "
        "(default: $GPURACK_DB, else ~/.local/share/gpurack/inventory.db)",
    )
    common.add_argument("--json", action="store_true", help="print JSON instead of tables")
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    verbs = parser.add_subparsers(title="verbs", metavar="VERB", required=True)

    verbs.add_parser("list", parents=[common], help="every node with its latest verdict").set_defaults(
        handler=handle_list
    )

    show = verbs.add_parser("show", parents=[common], help="one node's latest (or a given) snapshot")
    show.add_argument("host")
    show.add_argument("--run", type=int, metavar="RUN", help="the snapshot of run RUN (default: latest)")
    show.set_defaults(handler=handle_show)

    history = verbs.add_parser("history", parents=[common], help="every run that saw a node")
    history.add_argument("host")
    history.set_defaults(handler=handle_history)

    diff = verbs.add_parser("diff", parents=[common], help="what changed on a node (or on each) between runs")
    _diff_arguments(diff)

    outliers = verbs.add_parser(
        "outliers", parents=[common], help="nodes that differ from most of their pool (exit 1 if any)"
    )
    outliers.add_argument("--pool", metavar="POOL", help="only this pool (default: every pool)")
    outliers.set_defaults(handler=handle_outliers)

    export = verbs.add_parser("export", parents=[common], help="every node's latest snapshot as JSON or CSV")
    export.add_argument("--format", choices=("json", "csv"), default="json")
    export.add_argument("--output", "-o", type=Path, metavar="FILE", help="write to FILE instead of stdout")
    export.add_argument("--force", action="store_true", help="replace FILE if it is already there")
    export.set_defaults(handler=handle_export)


def _diff_arguments(diff: argparse.ArgumentParser) -> None:
    """HOST or --all, and the runs to compare."""
    diff.add_argument("host", nargs="?", help="the node (or --all)")
    diff.add_argument(
        "--all", action="store_true", help="every node's last two runs; print those that drifted"
    )
    diff.add_argument(
        "--from", dest="from_run", type=int, metavar="RUN", help="older run (default: the one before)"
    )
    diff.add_argument("--to", dest="to_run", type=int, metavar="RUN", help="newer run (default: the latest)")
    diff.set_defaults(handler=handle_diff)


def _store(args: argparse.Namespace) -> Store:
    """The inventory to read: a missing one is a usage error (64), never created."""
    return open_store(args.db, create=False)


def handle_list(args: argparse.Namespace) -> int:
    """Run `gpurack inventory list`."""
    with _store(args) as store:
        nodes = _readable_then_raise(store.list_nodes, lambda found: _print_list(args, found))
    _print_list(args, nodes)
    return ExitCode.OK


def _print_list(args: argparse.Namespace, nodes: Sequence[NodeSummary]) -> None:
    if args.json:
        render.json_out([asdict(n) for n in nodes])
    else:
        render.node_list(nodes)


def _readable_then_raise(read: Callable[[], list[T]], show: Callable[[Sequence[T]], None]) -> list[T]:
    """`read()`; when some of its rows are damaged, show the others, then raise (exit 2, one line)."""
    try:
        return read()
    except DamagedRowsError as damage:
        show(damage.readable)
        raise


def snapshot_json(view: SnapshotView) -> dict[str, Any]:
    """The machine form of `gpurack inventory show --json`."""
    return {
        "host": view.host,
        "pool": view.pool,
        "k8s_node_name": view.k8s_node_name,
        "run_id": view.run_id,
        "run_kind": view.run_kind,
        "started": view.started.isoformat(),
        "source": view.source,
        "verdict": view.verdict,
        "labels": dict(view.labels),
        "gpus": [asdict(g) for g in view.state.gpus],
        "nics": [asdict(n) for n in view.state.nics],
        "disks": [asdict(d) for d in view.state.disks],
        "results": list(view.results),
        "facts": dict(view.facts),
    }


def handle_show(args: argparse.Namespace) -> int:
    """Run `gpurack inventory show HOST`."""
    with _store(args) as store:
        view = store.snapshot(args.host, args.run)
    if args.json:
        render.json_out(snapshot_json(view))
    else:
        render.snapshot_view(view)
    return ExitCode.OK


def handle_history(args: argparse.Namespace) -> int:
    """Run `gpurack inventory history HOST`."""
    with _store(args) as store:
        entries = _readable_then_raise(
            lambda: store.history(args.host), lambda found: _print_history(args, found)
        )
    _print_history(args, entries)
    return ExitCode.OK


def _print_history(args: argparse.Namespace, entries: Sequence[HistoryEntry]) -> None:
    if args.json:
        render.json_out({"host": args.host, "runs": [asdict(e) for e in entries]})
    else:
        render.history_table(args.host, entries)


def comparison_json(comparison: Comparison) -> dict[str, Any]:
    """The machine form of `gpurack inventory diff --json` (a list of these with --all)."""
    return {
        "host": comparison.host,
        "from_run": comparison.from_run,
        "to_run": comparison.to_run,
        "from_fabric_run": comparison.from_fabric_run,
        "to_fabric_run": comparison.to_fabric_run,
        "drift": [asdict(d) for d in comparison.drifts],
    }


def handle_diff(args: argparse.Namespace) -> int:
    """Run `gpurack inventory diff HOST|--all`; exit 0 whether or not something changed."""
    _check_diff_target(args)
    if args.all:
        return _diff_all(args)
    with _store(args) as store:
        comparison = store.compare(args.host, args.from_run, args.to_run)
    if args.json:
        render.json_out(comparison_json(comparison))
    else:
        render.comparison(comparison)
    return ExitCode.OK


def _diff_all(args: argparse.Namespace) -> int:
    """`gpurack inventory diff --all`: every host in one read; the text names only those that drifted."""
    with _store(args) as store:
        found = store.compare_all()
    if args.json:
        render.json_out([comparison_json(c) for c in found])
    else:
        render.comparisons(found)
    return ExitCode.OK


def _check_diff_target(args: argparse.Namespace) -> None:
    """Exactly one of HOST and --all; --from/--to only with a HOST (usage errors, exit 64)."""
    see = "(see 'gpurack inventory diff --help')"
    if args.all and args.host is not None:
        raise UsageError(f"give a HOST or --all, not both {see}")
    if not args.all and args.host is None:
        raise UsageError(f"a HOST or --all is required {see}")
    if args.all and (args.from_run is not None or args.to_run is not None):
        raise UsageError(f"--from and --to compare the runs of one HOST, not --all {see}")


def homogeneity_json(report: Homogeneity) -> dict[str, Any]:
    """The machine form of `gpurack inventory outliers --json`."""
    return {
        "pools": [asdict(p) for p in report.pools],
        "unpooled": list(report.unpooled),
        "outliers": len(report.outliers),
    }


def handle_outliers(args: argparse.Namespace) -> int:
    """Run `gpurack inventory outliers`: exit 1 when a node differs from most of its pool."""
    with _store(args) as store:
        views = store.latest_snapshots(args.pool)
        if args.pool is not None and not views:
            pools = sorted({n.pool for n in store.list_nodes() if n.pool})
            raise UsageError(f"no node recorded in pool {args.pool!r} (pools: {', '.join(pools) or 'none'})")
    report = homogeneity(views)
    if args.json:
        render.json_out(homogeneity_json(report))
    else:
        render.outliers(report)
    return ExitCode.FAILED if report.outliers else ExitCode.OK


def handle_export(args: argparse.Namespace) -> int:
    """Run `gpurack inventory export --format json|csv`; an existing FILE is kept unless --force."""
    if args.output and not args.force:
        outfile.refuse_existing([args.output])
    with _store(args) as store:
        text = store.export(args.format)
    if not args.output:
        sys.stdout.write(text)
        return ExitCode.OK
    outfile.write_text(args.output, text, replace=args.force)
    return ExitCode.OK
