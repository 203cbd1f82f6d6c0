"""`gpurack fabric check`: every top-of-rack switch of an inventory read at once, and each
server's cabling plan and switch ports checked against what they show.

The reading, the plan and the checks are the collection's (module_utils/switch), as the
switch_fabric role runs them; here they run in threads, without a playbook.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import (
    CheckResult,
    Verdict,
    node_verdict,
    not_assessed,
    summarise,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch import (
    PLAN_KEYS,
    Connect,
    FabricPlan,
    PlanError,
    SwitchView,
    Target,
    check_fabric,
    plan_from_vars,
    read_switches,
    target_from_vars,
)

from gpurack.ansible_inventory import Inventory
from gpurack.errors import ExitCode, UsageError
from gpurack.inventory import open_store
from gpurack.records import LinkRecord, RunRecord

SCHEMA_VERSION = 1
SWITCH_GROUP = "tor_switches"
SWITCH_KEYS = ("ansible_host", "ansible_port", "ansible_user", "ansible_password", "ansible_network_os")


@dataclass(frozen=True, slots=True)
class FabricCheck:
    """One check of the fabric: the plan, what each switch showed or why not, the results."""

    inventory: Path
    plan: FabricPlan
    views: Mapping[str, SwitchView]
    unreadable: Mapping[str, str]
    results: Mapping[str, tuple[CheckResult, ...]]

    @property
    def not_assessed(self) -> str | None:
        """Why the fabric could not be assessed (no switch read, or every check skipped), or None."""
        if not self.views:
            return f"no switch could be read ({len(self.unreadable)} unreadable)"
        return not_assessed([r for results in self.results.values() for r in results])

    @property
    def exit_code(self) -> ExitCode:
        """1 when a server's verdict is fail, as `gpurack validate`; 2 when nothing could be
        assessed (every switch unreachable); a warn, or some switches unreadable, exit 0."""
        if any(node_verdict(r) is Verdict.FAIL for r in self.results.values() if r):
            return ExitCode.FAILED
        return ExitCode.NOT_ASSESSED if self.not_assessed else ExitCode.OK

    def summary(self, server: str) -> dict[str, Any]:
        return summarise(self.results[server])

    def as_dict(self) -> dict[str, Any]:
        """The machine form printed by `--json`."""
        return {
            "schema_version": SCHEMA_VERSION,
            "inventory": str(self.inventory),
            "switches": {
                **{name: {"read": True, "platform": v.platform} for name, v in self.views.items()},
                **{name: {"read": False, "error": why} for name, why in self.unreadable.items()},
            },
            "servers": {
                server: {"results": [r.to_dict() for r in results], "summary": summarise(results)}
                for server, results in self.results.items()
            },
        }

    def links(self) -> dict[str, list[LinkRecord]]:
        """Where LLDP shows each planned NIC (and each NIC of a planned server it shows off
        the plan), per server; NICs planned on a switch that was not read are left out."""
        seen: dict[tuple[str, str], tuple[str, str]] = {}
        for view in self.views.values():
            for neighbor in view.neighbors:
                seen.setdefault((neighbor.system, neighbor.remote_port), (view.name, neighbor.port))
        out: dict[str, list[LinkRecord]] = {}
        planned = set()
        for link in self.plan.links:
            planned.add((link.server, link.lldp_port_id))
            if link.switch not in self.views:
                continue
            where = seen.get((link.server, link.lldp_port_id))
            record = (
                LinkRecord(link.nic, *where, f"{link.server} {link.lldp_port_id}")
                if where
                else LinkRecord(link.nic, None, None, None)
            )
            out.setdefault(link.server, []).append(record)
        servers = {link.server for link in self.plan.links}
        nics = {(link.server, link.nic) for link in self.plan.links}
        for (system, port_id), (switch, port) in sorted(seen.items()):
            if system in servers and (system, port_id) not in planned and (system, port_id) not in nics:
                out.setdefault(system, []).append(LinkRecord(port_id, switch, port, f"{system} {port_id}"))
        return out


def load(inventory_path: Path, timeout: float) -> tuple[FabricPlan, list[tuple[Target, object]]]:
    """The plan of every cabled host and each switch's target, from the inventory.

    Raises:
        UsageError: the inventory cannot be read, has no tor_switches or no cabled server, or a
            plan, an expectation or a switch's login is malformed.
    """
    inventory = Inventory(inventory_path)
    switch_names = inventory.hosts(SWITCH_GROUP)
    if not switch_names:
        raise UsageError(f"{inventory_path}: no hosts in {SWITCH_GROUP}; nothing to check")
    servers = [h for h in inventory.hosts() if h not in switch_names]
    try:
        plan = plan_from_vars({name: inventory.host_vars(name, PLAN_KEYS) for name in servers}, switch_names)
        targets = []
        for name in switch_names:
            values = inventory.host_vars(name, SWITCH_KEYS)
            targets.append((target_from_vars(name, values, timeout), values.get("ansible_network_os")))
    except PlanError as exc:
        raise UsageError(f"{inventory_path}: {exc}") from None
    if not plan.links:
        raise UsageError(f"{inventory_path}: no host has gpurack_cabling; nothing to check")
    return plan, targets


def check(
    inventory_path: Path,
    plan: FabricPlan,
    targets: Sequence[tuple[Target, object]],
    connect: Connect,
    on_done: Callable[[str], None] | None = None,
) -> FabricCheck:
    """Read every switch at once (`load` gave the plan and targets) and check every cabled server."""
    views, unreadable = read_switches(targets, connect, on_done=on_done)
    results = check_fabric(plan.links, views, plan.expect_for, unreadable)
    return FabricCheck(
        inventory=inventory_path,
        plan=plan,
        views=views,
        unreadable=unreadable,
        results={server: tuple(results[server]) for server in sorted(results)},
    )


def record(fabric: FabricCheck, db: str | None) -> int:
    """Keep where each NIC was seen in the inventory DB; return the run id."""
    status = "failed" if fabric.exit_code else "successful"
    run = RunRecord(kind="fabric", source=f"inventory:{fabric.inventory}", status=status)
    with open_store(db) as store:
        return store.record_links(run, fabric.links())
