"""How the lab shows itself: the status table and the up/down summaries (rich, on stdout)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpurack_lab.nodes import NodeRow
from gpurack_lab.rack import DownResult, HostStatus, UpResult

STATE_STYLE = {"running": "green", "missing": "bold red"}


def _console() -> Console:
    # Wide enough for the status table when piped (rich assumes 80 columns off a terminal).
    width = None if sys.stdout.isatty() else 160
    return Console(file=sys.stdout, highlight=False, markup=False, soft_wrap=False, width=width)


def status_table(rows: Sequence[HostStatus], title: str = "lab") -> None:
    """One row per host: name, state, address, role, profile, faults, disks."""
    table = Table(title=title, title_justify="left")
    for column in ("host", "state", "address", "role", "profile (pool group)", "faults", "disks"):
        table.add_column(column)
    for row in rows:
        host = row.host
        table.add_row(
            host.name,
            Text(row.state, style=STATE_STYLE.get(row.state, "yellow")),
            host.ip,
            host.role.replace("_", " "),
            f"{host.profile} ({host.group})",
            ", ".join(host.faults) or "-",
            ", ".join(f"{d.device}={d.loop}" for d in host.disks) or "-",
        )
    _console().print(table)


def nodes_table(rows: Sequence[NodeRow] | str) -> None:
    """The Kubernetes nodes: readiness, version, gpurack labels, taints, GPUs; or why there are none."""
    console = _console()
    if isinstance(rows, str):
        console.print(f"Kubernetes: {rows}")
        return
    table = Table(title="Kubernetes nodes", title_justify="left")
    for column in (
        "node",
        "status",
        "version",
        "pool",
        "accelerator",
        "topology",
        "fabric",
        "taints",
        "GPUs",
    ):
        table.add_column(column)
    for row in rows:
        table.add_row(
            row.name,
            Text("Ready" if row.ready else "NotReady", style="green" if row.ready else "bold red"),
            row.version,
            *(row.labels.get(k, "-") for k in ("pool", "accelerator", "topology", "fabric")),
            "\n".join(row.taints) or "-",
            row.gpus,
        )
    console.print(table)


def up_summary(result: UpResult, rows: Sequence[HostStatus], inventory: str) -> None:
    """The status table, then how to use the lab."""
    console = _console()
    if result.already_up:
        console.print("lab already up; nothing changed ('gpurack lab down' first to change it)")
    status_table(rows)
    if not result.already_up:
        image = "cached" if result.image_cached else "built"
        console.print(
            f"lab up in {result.seconds:.1f} s (Docker {result.engine}, image {result.state.image} {image})"
        )
    console.print(f"inventory: {inventory}")
    playbook = "preflight"
    if result.state.kubernetes:
        console.print("Kubernetes: installed on every node from the offline build (not yet joined)")
        playbook = "site"
    if result.state.switches:
        faults = ", ".join(result.state.switch_faults) or "none"
        console.print(
            f"switches: {result.state.switches} on loopback (tor_switches), faults: {faults}; "
            f"gpurack fabric check -i {inventory}"
        )
    console.print(f"next: gpurack run {playbook} -i {inventory}   |   gpurack lab ssh {rows[-1].host.name}")


def down_summary(result: DownResult) -> None:
    """What was removed."""
    parts = [
        f"{len(result.containers)} containers ({', '.join(result.containers) or 'none'})",
        "network lab-net" if result.network else "no network",
        f"{len(result.loops)} loop devices ({', '.join(result.loops) or 'none'})",
        "keys, profiles, disk files and lab/inventory/hosts.yml",
    ]
    if result.switches:
        parts.append("the switch server")
    if result.images:
        parts.append(f"images {', '.join(result.images)}")
    _console().print("lab down: removed " + "; ".join(parts))
