"""How the lab shows itself: the status table and the up/down summaries, on stdout through
gpurack's render layer (so a hostile host or label name is shown escaped, like all gpurack output)."""

from __future__ import annotations

from collections.abc import Sequence

from gpurack import render
from gpurack.render import Styled

from gpurack_lab.nodes import NodeRow
from gpurack_lab.rack import DownResult, HostStatus, UpResult

STATE_STYLE = {"running": "green", "missing": "bold red"}


def status_table(rows: Sequence[HostStatus], title: str = "lab") -> None:
    """One row per host: name, state, address, role, profile, faults, disks."""
    render.table(
        title,
        ("host", "state", "address", "role", "profile (pool group)", "faults", "disks"),
        (
            (
                row.host.name,
                Styled(row.state, STATE_STYLE.get(row.state, "yellow")),
                row.host.ip,
                row.host.role.replace("_", " "),
                f"{row.host.profile} ({row.host.group})",
                ", ".join(row.host.faults) or "-",
                ", ".join(f"{d.device}={d.loop}" for d in row.host.disks) or "-",
            )
            for row in rows
        ),
    )


def nodes_table(rows: Sequence[NodeRow] | str) -> None:
    """The Kubernetes nodes: readiness, version, gpurack labels, taints, GPUs; or why there are none."""
    if isinstance(rows, str):
        render.line(f"Kubernetes: {rows}")
        return
    render.table(
        "Kubernetes nodes",
        ("node", "status", "version", "pool", "accelerator", "topology", "fabric", "taints", "GPUs"),
        (
            (
                row.name,
                Styled("Ready", "green") if row.ready else Styled("NotReady", "bold red"),
                row.version,
                *(row.labels.get(k, "-") for k in ("pool", "accelerator", "topology", "fabric")),
                "\n".join(row.taints) or "-",
                row.gpus,
            )
            for row in rows
        ),
    )


def up_summary(result: UpResult, rows: Sequence[HostStatus], inventory: str) -> None:
    """The status table, then how to use the lab."""
    if result.already_up:
        render.line("lab already up; nothing changed ('gpurack lab down' first to change it)")
    status_table(rows)
    if not result.already_up:
        image = "cached" if result.image_cached else "built"
        render.line(
            f"lab up in {result.seconds:.1f} s (Docker {result.engine}, image {result.state.image} {image})"
        )
    render.line(f"inventory: {inventory}")
    playbook = "preflight"
    if result.state.kubernetes:
        render.line("Kubernetes: installed on every node from the offline build (not yet joined)")
        playbook = "site"
    if result.state.switches:
        faults = ", ".join(result.state.switch_faults) or "none"
        render.line(
            f"switches: {result.state.switches} on loopback (tor_switches), faults: {faults}; "
            f"gpurack fabric check -i {inventory}"
        )
    render.line(f"next: gpurack run {playbook} -i {inventory}   |   gpurack lab ssh {rows[-1].host.name}")


def down_summary(result: DownResult) -> None:
    """What was removed."""
    parts = [
        f"{len(result.containers)} containers ({', '.join(result.containers) or 'none'})",
        f"network {result.network}" if result.network else "no network",
        f"{len(result.loops)} loop devices ({', '.join(result.loops) or 'none'})",
        "keys, profiles, disk files and its inventory",
    ]
    if result.switches:
        parts.append("the switch server")
    if result.images:
        parts.append(f"images {', '.join(result.images)}")
    render.line("lab down: removed " + "; ".join(parts))
