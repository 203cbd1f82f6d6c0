# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The switch fabric's checks: the cabling plan against LLDP, each cabled port's state, MTU,
speed, error counters and RoCE settings. Their specs are registered with every other check
(checks/switch.py); every result is the one result model's (CheckResult), on the server whose
NIC the port serves, component = NIC.

A mismatch names both ends: "gpu01 mlx5_3 should be on leaf1 Ethernet1/3; LLDP shows it on
leaf2 Ethernet1/7".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import CheckSpec, result, spec
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult, Verdict
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.host_lldp import HostNeighbor
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import Neighbor, Port, SwitchView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.plan import FabricExpect, Link
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.platforms import platform_for
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.topology import also_fits, sightings

SOURCE = "switch"

CABLING = spec("switch.cabling")
CABLING_HOST = spec("switch.cabling.host")
PORT_STATE = spec("switch.port.state")
PORT_MTU = spec("switch.port.mtu")
PORT_SPEED = spec("switch.port.speed")
PORT_ERRORS = spec("switch.port.errors")
PORT_ROCE = spec("switch.port.roce")

Results = dict[str, list[CheckResult]]


def _on(link: Link, entry: CheckSpec, verdict: Verdict, **fields: Any) -> CheckResult:
    """A result of `entry` on the server's NIC that `link` serves."""
    return result(entry, verdict, component=link.nic, source=SOURCE, **fields)


def _neighbor_on(view: SwitchView, port: str) -> Neighbor | None:
    return next((n for n in view.neighbors if n.port == port), None)


def _cabling(link: Link, links: Sequence[Link], views: Mapping[str, SwitchView]) -> CheckResult:
    planned = (link.switch, link.port)
    seen = sightings(link, views)
    shown = f"{link.server} {link.nic} should be on {link.switch_end()}"
    measured = [f"{switch} {neighbor.port}" for switch, neighbor in seen]
    for switch, neighbor in seen:
        also = also_fits(link, links, neighbor)
        if also:
            fits = ", ".join(k.server_end() for k in [link, *also])
            reason = (
                f"ambiguous: LLDP shows {neighbor.system} {neighbor.remote_port} on {switch} {neighbor.port},"
                f" which fits {fits}; name what each server sends (gpurack_lldp_system_name, or the NIC's"
                " lldp_port_id or mac in gpurack_cabling)"
            )
            return _on(
                link, CABLING, Verdict.WARN, measured=measured, expected=link.switch_end(), reason=reason
            )
    if planned in {(switch, neighbor.port) for switch, neighbor in seen}:
        return _on(link, CABLING, Verdict.PASS, measured=link.switch_end(), expected=link.switch_end())
    if seen:
        reason = f"{shown}; LLDP shows it on {', '.join(measured)}"
    else:
        other = _neighbor_on(views[link.switch], link.port)
        far = f"{other.system} {other.remote_port}" if other else "no neighbour"
        reason = f"{shown}; LLDP shows it on no switch port, and {link.switch_end()} shows {far}"
    return _on(
        link, CABLING, Verdict.FAIL, measured=measured or None, expected=link.switch_end(), reason=reason
    )


def _port_results(link: Link, port: Port | None, view: SwitchView, want: FabricExpect) -> list[CheckResult]:
    ends = f"{link.switch_end()} ({link.server_end()})"
    if port is None:
        return [
            _on(
                link, PORT_STATE, Verdict.FAIL, expected="up", reason=f"{link.switch} has no port {link.port}"
            )
        ]
    out = [_state(link, port, ends)]
    if want.mtu is not None:
        out.append(_mtu(link, port, want.mtu, ends))
    if want.speed_gbps is not None and port.oper_up:
        out.append(_speed(link, port, want.speed_gbps, ends))
    if port.input_errors is not None or port.output_errors is not None:
        out.append(_errors(link, port, ends))
    if want.pfc_priority is not None:
        out.append(_roce(link, view, want, ends))
    return out


def _mtu(link: Link, port: Port, want: int, ends: str) -> CheckResult:
    low = port.mtu is None or port.mtu < want
    return _on(
        link,
        PORT_MTU,
        Verdict.FAIL if low else Verdict.PASS,
        measured=port.mtu,
        expected=want,
        unit="bytes",
        reason=f"{ends}: MTU {port.mtu}, below the pool's {want}" if low else "",
    )


def _speed(link: Link, port: Port, want: float, ends: str) -> CheckResult:
    slow = port.speed_gbps is None or port.speed_gbps < want
    return _on(
        link,
        PORT_SPEED,
        Verdict.FAIL if slow else Verdict.PASS,
        measured=port.speed_gbps,
        expected=want,
        unit="Gb/s",
        reason=f"{ends}: {port.speed_gbps} Gb/s, below the pool's {want:g}" if slow else "",
    )


def _errors(link: Link, port: Port, ends: str) -> CheckResult:
    inputs, outputs = port.input_errors or 0, port.output_errors or 0
    return _on(
        link,
        PORT_ERRORS,
        Verdict.WARN if inputs + outputs else Verdict.PASS,
        measured=inputs + outputs,
        expected=0,
        reason=f"{ends}: {inputs} input and {outputs} output errors" if inputs + outputs else "",
    )


def _state(link: Link, port: Port, ends: str) -> CheckResult:
    if not port.admin_up:
        return _on(
            link, PORT_STATE, Verdict.FAIL, measured="disabled", expected="up", reason=f"{ends} is disabled"
        )
    if not port.oper_up:
        return _on(link, PORT_STATE, Verdict.FAIL, measured="down", expected="up", reason=f"{ends} is down")
    return _on(link, PORT_STATE, Verdict.PASS, measured="up", expected="up")


def _roce(link: Link, view: SwitchView, want: FabricExpect, ends: str) -> CheckResult:
    settings = view.roce.get(link.port)
    problems = []
    if settings is None or not settings.pfc:
        problems.append("PFC off")
    elif platform_for(view.platform).per_port_priorities and want.pfc_priority not in settings.pfc_priorities:
        problems.append(f"priority {want.pfc_priority} not lossless")
    if want.ecn and (settings is None or not settings.ecn):
        problems.append("ECN off")
    measured = None
    if settings is not None:
        measured = {"pfc": settings.pfc, "pfc_priorities": list(settings.pfc_priorities), "ecn": settings.ecn}
    return _on(
        link,
        PORT_ROCE,
        Verdict.FAIL if problems else Verdict.PASS,
        measured=measured,
        expected={"pfc_priority": want.pfc_priority, "ecn": want.ecn},
        reason=f"{ends}: {', '.join(problems)}" if problems else "",
    )


def _unreachable(link: Link, reason: str) -> list[CheckResult]:
    why = f"{link.switch} could not be read: {reason}"
    return [_on(link, entry, Verdict.SKIP, reason=why) for entry in (CABLING, PORT_STATE)]


def _extra(links: Sequence[Link], views: Mapping[str, SwitchView]) -> Results:
    """LLDP neighbours that are NICs of planned servers, on ports the plan does not have."""
    out: Results = {}
    for view in views.values():
        for neighbor in view.neighbors:
            if any(k.sent_by(neighbor.system, neighbor.remote_port) for k in links):
                continue
            server = next((k.server for k in links if k.is_system(neighbor.system)), None)
            if server is not None:
                reason = (
                    f"LLDP shows {neighbor.system} {neighbor.remote_port} on {view.name} {neighbor.port}, "
                    "which the cabling plan does not have"
                )
                out.setdefault(server, []).append(
                    result(
                        CABLING,
                        Verdict.FAIL,
                        component=neighbor.remote_port,
                        measured=f"{view.name} {neighbor.port}",
                        reason=reason,
                        source=SOURCE,
                    )
                )
    return out


def check_fabric(
    links: Sequence[Link],
    views: Mapping[str, SwitchView],
    expect: Callable[[str], FabricExpect],
    unreachable: Mapping[str, str] | None = None,
) -> Results:
    """Every server's switch-side results, by server.

    `views` holds the switches that were read; `unreachable` names each switch that was not,
    with why: its links are skipped with that reason, and the others are still checked.
    """
    unreachable = unreachable or {}
    out: Results = {}
    for link in links:
        results = out.setdefault(link.server, [])
        view = views.get(link.switch)
        if view is None:
            results.extend(_unreachable(link, unreachable.get(link.switch, "not in tor_switches")))
            continue
        results.append(_cabling(link, links, views))
        results.extend(_port_results(link, view.ports.get(link.port), view, expect(link.server)))
    for server, extra in _extra(links, views).items():
        out.setdefault(server, []).extend(extra)
    return out


def check_host_lldp(links: Sequence[Link], neighbors: Sequence[HostNeighbor]) -> list[CheckResult]:
    """A server's planned links against its own LLDP neighbours (lldpd), by the interface each
    NIC advertises (`lldp_port_id`); a NIC whose interface lldpd does not list has no result."""
    by_interface = {n.interface: n for n in neighbors}
    out = []
    for link in links:
        seen = by_interface.get(link.lldp_port_id)
        if seen is None:
            continue
        shown = f"{seen.system} {seen.port}"
        if (seen.system, seen.port) == (link.switch, link.port):
            out.append(_on(link, CABLING_HOST, Verdict.PASS, measured=shown, expected=link.switch_end()))
            continue
        reason = (
            f"{link.server} {link.nic} should be on {link.switch_end()}; "
            f"the host's LLDP ({link.lldp_port_id}) shows {shown}"
        )
        out.append(
            _on(link, CABLING_HOST, Verdict.FAIL, measured=shown, expected=link.switch_end(), reason=reason)
        )
    return out
