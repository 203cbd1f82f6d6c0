# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Switch fabric filters: switch_port_intents, fabric_results, fabric_placement (docs: sidecar .yml
files)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch import (
    PLAN_KEYS,
    FabricPlan,
    PlanError,
    SwitchOutputError,
    SwitchView,
    check_fabric,
    check_host_lldp,
    parse_neighbors,
    placement,
    plan_from_vars,
    port_intents,
    view_from_dict,
)


def _plan(
    hostvars: Mapping[str, Mapping[str, Any]], servers: Sequence[str], switches: Sequence[str] | None = None
) -> FabricPlan:
    try:
        plan_vars = {name: {k: hostvars[name].get(k) for k in PLAN_KEYS} for name in servers}
        return plan_from_vars(plan_vars, switches)
    except PlanError as exc:
        raise AnsibleFilterError(str(exc)) from None


def switch_port_intents(
    hostvars: Mapping[str, Mapping[str, Any]], servers: Sequence[str], switch: str
) -> list[dict[str, Any]]:
    """The intended settings of each port of `switch` that the servers' cabling plan uses."""
    return [
        {
            "port": i.port,
            "description": i.description,
            "mtu": i.mtu,
            "speed_gbps": i.speed_gbps,
            "pfc_priority": i.pfc_priority,
            "ecn": i.ecn,
        }
        for i in port_intents(_plan(hostvars, servers), switch)
    ]


def _views(
    hostvars: Mapping[str, Mapping[str, Any]], switches: Sequence[str]
) -> tuple[dict[str, SwitchView], dict[str, str]]:
    """What each switch showed in this run (`switch_fabric_view`), and why each other was not read."""
    views = {}
    failed = {}
    for name in switches:
        values = hostvars[name]
        view = values.get("switch_fabric_view")
        if view:
            views[name] = view_from_dict(dict(view))
        else:
            failed[name] = str(values.get("switch_fabric_error") or "it was not read in this run")
    return views, failed


def fabric_placement(
    hostvars: Mapping[str, Mapping[str, Any]],
    servers: Sequence[str],
    switches: Sequence[str],
    server: str,
    spines: Sequence[str] = (),
) -> dict[str, Any] | None:
    """Where `server` was seen: the leaves its planned NICs are on and the spines (of `spines`)
    those leaves see over LLDP; None (its labels stay) when no switch read in this run saw one of
    its NICs, a NIC is planned on a switch not read, or a sighting fits two planned NICs."""
    if isinstance(spines, str) or not all(isinstance(s, str) and s for s in spines):
        raise AnsibleFilterError(f"gpurack_fabric_spines must be a list of switch names, got {spines!r}")
    plan = _plan(hostvars, servers, switches)
    seen = placement(server, plan.links, _views(hostvars, switches)[0], spines)
    return seen.to_dict() if seen else None


def fabric_results(
    hostvars: Mapping[str, Mapping[str, Any]],
    servers: Sequence[str],
    switches: Sequence[str],
    server: str,
    host_lldp: str = "",
) -> list[dict[str, Any]]:
    """The switch-side check results of `server`'s cabled NICs, from what each switch showed
    (`switch_fabric_view`) or why it could not be read (`switch_fabric_error`), and, given
    the server's `lldpcli -f json0 show neighbors`, what its own LLDP shows."""
    plan = _plan(hostvars, servers, switches)
    views, failed = _views(hostvars, switches)
    results = check_fabric(plan.links, views, plan.expect_for, failed).get(server, [])
    if host_lldp.strip():
        try:
            neighbors = parse_neighbors(host_lldp)
        except SwitchOutputError as exc:
            raise AnsibleFilterError(f"{server}: {exc}") from None
        results += check_host_lldp([k for k in plan.links if k.server == server], neighbors)
    return [r.to_dict() for r in results]


class FilterModule:
    """gpurack.bootstrap switch fabric filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "switch_port_intents": switch_port_intents,
            "fabric_results": fabric_results,
            "fabric_placement": fabric_placement,
        }
