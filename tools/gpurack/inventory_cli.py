"""`gpurack inventory list | show | history | diff | export`: read the node inventory."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.table import Table

from gpurack.errors import ExitCode, UsageError
from gpurack.inventory import Comparison, SnapshotView, Store, open_store

VERDICT_STYLE = {"fail": "bold red", "warn": "yellow", "skip": "dim", "pass": "green"}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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

    diff = verbs.add_parser("diff", parents=[common], help="what changed on a node between two runs")
    diff.add_argument("host")
    diff.add_argument(
        "--from", dest="from_run", type=int, metavar="RUN", help="older run (default: the one before)"
    )
    diff.add_argument("--to", dest="to_run", type=int, metavar="RUN", help="newer run (default: the latest)")
    diff.set_defaults(handler=handle_diff)

    export = verbs.add_parser("export", parents=[common], help="every node's latest snapshot as JSON or CSV")
    export.add_argument("--format", choices=("json", "csv"), default="json")
    export.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout")
    export.set_defaults(handler=handle_export)


def _console() -> Console:
    # Looked up per call so redirection and pytest's capsys see the output; piped into a file
    # or a ticket, tables get room instead of rich's 80-column fallback.
    width = None if sys.stdout.isatty() else 160
    return Console(file=sys.stdout, highlight=False, soft_wrap=True, width=width)


def _json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def _when(value: datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M")


def _verdict(value: str | None) -> str:
    if value is None:
        return "-"
    style = VERDICT_STYLE.get(value)
    return f"[{style}]{value}[/]" if style else value


def _cell(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


def _store(args: argparse.Namespace) -> Store:
    return open_store(args.db)


def handle_list(args: argparse.Namespace) -> int:
    """Run `gpurack inventory list`."""
    with _store(args) as store:
        nodes = store.list_nodes()
    if args.json:
        _json([asdict(n) for n in nodes])
        return ExitCode.OK
    if not nodes:
        _console().print("no nodes recorded yet: `gpurack validate` and `gpurack run` record them")
        return ExitCode.OK
    table = Table(title=f"{len(nodes)} node{'s' if len(nodes) != 1 else ''}")
    for column in ("host", "pool", "k8s node", "GPUs", "driver", "verdict", "runs", "last run", "last seen"):
        table.add_column(column)
    for n in nodes:
        gpus = f"{n.gpus}x {n.gpu_model}" if n.gpus and n.gpu_model else str(n.gpus)
        table.add_row(
            n.host,
            _cell(n.pool),
            _cell(n.k8s_node_name),
            gpus,
            _cell(n.driver),
            _verdict(n.verdict),
            str(n.runs),
            _cell(n.last_run),
            _when(n.last_seen),
        )
    _console().print(table)
    return ExitCode.OK


def _snapshot_json(view: SnapshotView) -> dict[str, Any]:
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
        _json(_snapshot_json(view))
        return ExitCode.OK
    state = view.state
    console = _console()
    console.print(
        f"[bold]{view.host}[/]  pool {_cell(view.pool)}  k8s node {_cell(view.k8s_node_name)}  "
        f"run {view.run_id} ({view.run_kind}, {_when(view.started)}, {view.source})  "
        f"verdict {_verdict(view.verdict)}"
    )
    console.print(f"kernel {_cell(state.kernel)}  driver {_cell(state.driver)}  CUDA {_cell(state.cuda)}")
    if state.gpus:
        gpus = Table(title="GPUs")
        for column in ("#", "bus id", "name", "serial", "UUID", "VBIOS", "memory MiB", "PCIe now / max"):
            gpus.add_column(column)
        for g in state.gpus:
            gpus.add_row(
                _cell(g.index),
                _cell(g.bus_id),
                _cell(g.name),
                _cell(g.serial),
                _cell(g.uuid),
                _cell(g.vbios),
                _cell(g.memory_mib),
                f"Gen{_cell(g.pcie_gen_current)} x{_cell(g.pcie_width_current)} / "
                f"Gen{_cell(g.pcie_gen_max)} x{_cell(g.pcie_width_max)}",
            )
        console.print(gpus)
    if state.nics:
        nics = Table(title="RDMA ports")
        for column in ("device", "port", "state", "rate Gb/s", "link layer", "GUID", "firmware"):
            nics.add_column(column)
        for n in state.nics:
            nics.add_row(
                n.device,
                _cell(n.port),
                "/".join(s for s in (n.state, n.phys_state) if s) or "-",
                _cell(n.rate_gbps),
                _cell(n.link_layer),
                _cell(n.guid),
                _cell(n.fw),
            )
        console.print(nics)
    if state.disks:
        disks = Table(title="NVMe")
        for column in ("name", "model", "serial", "firmware", "size GB"):
            disks.add_column(column)
        for d in state.disks:
            size = None if d.size_bytes is None else f"{d.size_bytes / 1e9:.0f}"
            disks.add_row(d.name, _cell(d.model), _cell(d.serial), _cell(d.firmware), _cell(size))
        console.print(disks)
    failing = [r for r in view.results if r.get("verdict") in ("fail", "warn")]
    if failing:
        checks = Table(title="checks not passing")
        for column in ("check", "component", "verdict", "reason"):
            checks.add_column(column)
        for r in failing:
            checks.add_row(
                str(r.get("id")),
                _cell(r.get("component")),
                _verdict(r.get("verdict")),
                _cell(r.get("reason")),
            )
        console.print(checks)
    return ExitCode.OK


def handle_history(args: argparse.Namespace) -> int:
    """Run `gpurack inventory history HOST`."""
    with _store(args) as store:
        entries = store.history(args.host)
    if args.json:
        _json({"host": args.host, "runs": [asdict(e) for e in entries]})
        return ExitCode.OK
    table = Table(title=f"{args.host}: {len(entries)} snapshot{'s' if len(entries) != 1 else ''}")
    for column in (
        "run",
        "kind",
        "started",
        "status",
        "source",
        "verdict",
        "kernel",
        "driver",
        "CUDA",
        "GPUs",
    ):
        table.add_column(column)
    for e in entries:
        table.add_row(
            str(e.run_id),
            e.kind,
            _when(e.started),
            e.status,
            e.source,
            _verdict(e.verdict),
            _cell(e.kernel),
            _cell(e.driver),
            _cell(e.cuda),
            str(e.gpus),
        )
    _console().print(table)
    return ExitCode.OK


def _comparison_json(comparison: Comparison) -> dict[str, Any]:
    return {
        "host": comparison.host,
        "from_run": comparison.from_run,
        "to_run": comparison.to_run,
        "drift": [asdict(d) for d in comparison.drifts],
    }


def handle_diff(args: argparse.Namespace) -> int:
    """Run `gpurack inventory diff HOST`; exit 0 whether or not something changed."""
    with _store(args) as store:
        comparison = store.compare(args.host, args.from_run, args.to_run)
    if args.json:
        _json(_comparison_json(comparison))
        return ExitCode.OK
    console = _console()
    if comparison.from_run is None:
        console.print(f"{comparison.host}: only one snapshot (run {comparison.to_run}), nothing to compare")
        return ExitCode.OK
    span = f"{comparison.host}: run {comparison.from_run} -> run {comparison.to_run}"
    if not comparison.drifts:
        console.print(f"{span}: no drift")
        return ExitCode.OK
    count = len(comparison.drifts)
    console.print(f"{span}: {count} change{'s' if count != 1 else ''}")
    for item in comparison.drifts:
        # markup=False: sentences hold serials and [brackets] that are not rich markup.
        console.print(f"  - {item.sentence}", markup=False)
    return ExitCode.OK


def handle_export(args: argparse.Namespace) -> int:
    """Run `gpurack inventory export --format json|csv`."""
    with _store(args) as store:
        text = store.export(args.format)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    else:
        sys.stdout.write(text)
    return ExitCode.OK
