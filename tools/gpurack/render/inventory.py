"""`gpurack inventory` as tables: the node list, one snapshot, a node's history, drift of one or all."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import is_finding
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpurack.formatting import plural
from gpurack.hoststate import HostState
from gpurack.records import Comparison, HistoryEntry, NodeSummary, SnapshotView
from gpurack.render.console import stdout_console
from gpurack.render.text import cell, when
from gpurack.render.verdicts import verdict_text


def _console() -> Console:
    # Piped into a file or a ticket, tables get room instead of rich's 80-column fallback.
    return stdout_console(width=None if sys.stdout.isatty() else 160, soft_wrap=True)


def _table(title: str, *columns: str) -> Table:
    out = Table(title=title)
    for column in columns:
        out.add_column(column)
    return out


def node_list(nodes: Sequence[NodeSummary]) -> None:
    """Every node with its latest verdict, or a note that there is none yet."""
    if not nodes:
        _console().print("no nodes recorded yet: `gpurack validate` and `gpurack run` record them")
        return
    columns = ("host", "pool", "k8s node", "GPUs", "driver", "verdict", "runs", "last run", "last seen")
    out = _table(plural(len(nodes), "node"), *columns)
    for n in nodes:
        gpus = f"{n.gpus}x {n.gpu_model}" if n.gpus and n.gpu_model else str(n.gpus)
        out.add_row(
            n.host,
            cell(n.pool),
            cell(n.k8s_node_name),
            gpus,
            cell(n.driver),
            verdict_text(n.verdict),
            str(n.runs),
            cell(n.last_run),
            when(n.last_seen),
        )
    _console().print(out)


def snapshot_view(view: SnapshotView) -> None:
    """One snapshot: its header, software, GPUs, RDMA ports, NVMe disks and the checks not passing."""
    console = _console()
    console.print(
        Text.assemble(
            (view.host, "bold"),
            f"  pool {cell(view.pool)}  k8s node {cell(view.k8s_node_name)}  "
            f"run {view.run_id} ({view.run_kind}, {when(view.started)}, {view.source})  verdict ",
            verdict_text(view.verdict),
        )
    )
    state = view.state
    console.print(f"kernel {cell(state.kernel)}  driver {cell(state.driver)}  CUDA {cell(state.cuda)}")
    tables = (_gpus(state), _nics(state), _disks(state), _failing(view))
    for table in tables:
        if table is not None:
            console.print(table)


def _gpus(state: HostState) -> Table | None:
    if not state.gpus:
        return None
    out = _table("GPUs", "#", "bus id", "name", "serial", "UUID", "VBIOS", "memory MiB", "PCIe now / max")
    for g in state.gpus:
        out.add_row(
            cell(g.index),
            cell(g.bus_id),
            cell(g.name),
            cell(g.serial),
            cell(g.uuid),
            cell(g.vbios),
            cell(g.memory_mib),
            f"Gen{cell(g.pcie_gen_current)} x{cell(g.pcie_width_current)} / "
            f"Gen{cell(g.pcie_gen_max)} x{cell(g.pcie_width_max)}",
        )
    return out


def _nics(state: HostState) -> Table | None:
    if not state.nics:
        return None
    out = _table("RDMA ports", "device", "port", "state", "rate Gb/s", "link layer", "GUID", "firmware")
    for n in state.nics:
        out.add_row(
            n.device,
            cell(n.port),
            "/".join(s for s in (n.state, n.phys_state) if s) or "-",
            cell(n.rate_gbps),
            cell(n.link_layer),
            cell(n.guid),
            cell(n.fw),
        )
    return out


def _disks(state: HostState) -> Table | None:
    if not state.disks:
        return None
    out = _table("NVMe", "name", "model", "serial", "firmware", "size GB")
    for d in state.disks:
        size = None if d.size_bytes is None else f"{d.size_bytes / 1e9:.0f}"
        out.add_row(d.name, cell(d.model), cell(d.serial), cell(d.firmware), cell(size))
    return out


def _failing(view: SnapshotView) -> Table | None:
    failing = [r for r in view.results if is_finding(r.get("verdict"))]
    if not failing:
        return None
    out = _table("checks not passing", "check", "component", "verdict", "reason")
    for r in failing:
        verdict = verdict_text(r.get("verdict"))
        out.add_row(str(r.get("id")), cell(r.get("component")), verdict, cell(r.get("reason")))
    return out


def history_table(host: str, entries: Sequence[HistoryEntry]) -> None:
    """Every run that saw `host`, oldest first."""
    columns = ("run", "kind", "started", "status", "source", "verdict", "kernel", "driver", "CUDA", "GPUs")
    out = _table(f"{host}: {plural(len(entries), 'snapshot')}", *columns)
    for e in entries:
        out.add_row(
            str(e.run_id),
            e.kind,
            when(e.started),
            e.status,
            e.source,
            verdict_text(e.verdict),
            cell(e.kernel),
            cell(e.driver),
            cell(e.cuda),
            str(e.gpus),
        )
    _console().print(out)


def comparison(result: Comparison) -> None:
    """What drifted on a host between two runs (and two fabric runs), one sentence per change."""
    _print_comparison(_console(), result)


def comparisons(results: Sequence[Comparison]) -> None:
    """The hosts of `results` that drifted, one block each as `comparison()` prints it, then a count."""
    console = _console()
    drifted = [result for result in results if result.drifts]
    for result in drifted:
        _print_comparison(console, result)
    console.print(f"{len(drifted)} of {plural(len(results), 'host')} drifted")


def _print_comparison(console: Console, result: Comparison) -> None:
    spans = []
    if result.to_run is not None:
        if result.from_run is None:
            spans.append(f"only one snapshot (run {result.to_run})")
        else:
            spans.append(f"run {result.from_run} -> run {result.to_run}")
    if result.to_fabric_run is not None:
        if result.from_fabric_run is None:
            spans.append(f"only one fabric run (run {result.to_fabric_run})")
        else:
            spans.append(f"fabric run {result.from_fabric_run} -> run {result.to_fabric_run}")
    span = f"{result.host}: {'; '.join(spans)}"
    if result.from_run is None and result.from_fabric_run is None:
        console.print(f"{span}, nothing to compare")
        return
    if not result.drifts:
        console.print(f"{span}: no drift")
        return
    console.print(f"{span}: {plural(len(result.drifts), 'change')}")
    for item in result.drifts:
        console.print(f"  - {item.sentence}")
