# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The fabric as the inventory describes it, and read from every switch at once.

One home for what the role (through its filters) and `gpurack fabric check` both need: the
planned links and each server's expectations from its variables, each switch's SSH target
and platform from its variables, the intended settings of a switch's cabled ports, and the
parallel read of many switches with one line per switch that could not be read.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import validate_expect
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import excerpt
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.intent import PortIntent
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import (
    SwitchOutputError,
    SwitchView,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.plan import (
    FabricExpect,
    Link,
    PlanError,
    normal_mac,
    read_expect,
    read_plan,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.platforms import (
    Platform,
    UnknownPlatformError,
    platform_for,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.session import (
    Connect,
    SwitchReadError,
    Target,
    run_commands,
)

# The server variables a plan is read from: the cabling, the pool's fabric and expectations,
# the LLDP system name the server sends where it is not its inventory name or FQDN, and the
# NIC facts (their MAC addresses, which lldpd sends as port IDs by default).
PLAN_KEYS = ("gpurack_cabling", "gpurack_fabric", "gpurack_expect", "gpurack_lldp_system_name", "gpurack_nic")
DEFAULT_TIMEOUT_S = 30.0
MAX_PARALLEL = 32


@dataclass(frozen=True)
class FabricPlan:
    """Every planned link, and each cabled server's expectations."""

    links: tuple[Link, ...]
    expect: Mapping[str, FabricExpect]

    def expect_for(self, server: str) -> FabricExpect:
        return self.expect.get(server, FabricExpect())


def plan_from_vars(
    server_vars: Mapping[str, Mapping[str, Any]], switches: Collection[str] | None = None
) -> FabricPlan:
    """The plan from each server's `gpurack_cabling`, `gpurack_fabric` and `gpurack_expect`;
    `switches`, when given, are the only switches a link may name (tor_switches).

    Raises:
        PlanError: a plan or an expectation is malformed or impossible (read_plan).
    """
    cabled = {name: v.get("gpurack_cabling") for name, v in server_vars.items() if v.get("gpurack_cabling")}
    links = [_known_to_lldp(link, server_vars[link.server]) for link in read_plan(cabled, switches)]
    expect = {}
    for name in cabled:
        values = server_vars[name]
        if problems := validate_expect(values.get("gpurack_expect")):
            raise PlanError(f"{name}: {problems[0]}")
        rdma = (values.get("gpurack_expect") or {}).get("rdma")
        expect[name] = read_expect(name, values.get("gpurack_fabric"), rdma)
    return FabricPlan(tuple(links), expect)


def _known_to_lldp(link: Link, values: Mapping[str, Any]) -> Link:
    """`link` with the names the server's LLDP agent may send: the declared system name, and the
    MACs its NIC facts give for the NIC (by the plan's NIC name or `lldp_port_id`).

    Raises:
        PlanError: gpurack_lldp_system_name is not text.
    """
    declared = values.get("gpurack_lldp_system_name")
    if declared is not None and (not isinstance(declared, str) or not declared.strip()):
        raise PlanError(
            f"{link.server}: gpurack_lldp_system_name must be a host name, got {excerpt(declared)}"
        )
    nic_facts = values.get("gpurack_nic")
    interfaces = nic_facts.get("net") if isinstance(nic_facts, Mapping) else None
    macs = [
        normal_mac(i.get("address"))
        for i in interfaces or []
        if isinstance(i, Mapping) and i.get("name") in (link.nic, link.lldp_port_id)
    ]
    return replace(
        link,
        system_names=(declared.strip(),) if declared else (),
        macs=tuple(dict.fromkeys([*link.macs, *(m for m in macs if m)])),
    )


def port_intents(plan: FabricPlan, switch: str) -> list[PortIntent]:
    """The intended settings of every port of `switch` that the plan cables, in port order."""
    intents = []
    for link in sorted((k for k in plan.links if k.switch == switch), key=lambda k: k.port):
        want = plan.expect_for(link.server)
        speed = int(want.speed_gbps) if want.speed_gbps is not None else None
        intents.append(
            PortIntent(
                port=link.port,
                description=f"{link.server} {link.nic}",
                mtu=want.mtu,
                speed_gbps=speed,
                pfc_priority=want.pfc_priority,
                ecn=want.ecn,
            )
        )
    return intents


def target_from_vars(name: str, values: Mapping[str, Any], timeout: float = DEFAULT_TIMEOUT_S) -> Target:
    """Where a switch (an inventory host of tor_switches) answers SSH, from its variables.

    Raises:
        PlanError: no address or no credentials.
    """
    for key in ("ansible_host", "ansible_user", "ansible_password", "ansible_network_os"):
        value = values.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int, float))):
            raise PlanError(f"{name}: {key} must be text, got {value!r}")
    host = values.get("ansible_host") or name
    user = values.get("ansible_user")
    password = values.get("ansible_password")
    if not user or password is None:
        raise PlanError(f"{name}: a switch needs ansible_user and ansible_password")
    port = values.get("ansible_port") or 22
    if isinstance(port, bool) or not str(port).isdecimal() or not 0 < int(port) < 65536:
        raise PlanError(f"{name}: ansible_port must be a TCP port (1 to 65535), got {port!r}")
    return Target(name, str(host), int(port), str(user), str(password), timeout)


def read_switch(target: Target, network_os: object, connect: Connect) -> SwitchView:
    """One switch's view.

    Raises:
        SwitchReadError: it could not be read; `kind` says why (platform and output included).
    """
    try:
        platform: Platform = platform_for(network_os)
    except UnknownPlatformError as exc:
        raise SwitchReadError("platform", f"{target.name}: {exc}") from None
    outputs = run_commands(target, platform.name, platform.commands, connect)
    try:
        return platform.parse(target.name, outputs)
    except SwitchOutputError as exc:
        raise SwitchReadError("output", f"{target.where()}: {exc}") from None


def read_switches(
    switches: Sequence[tuple[Target, object]],
    connect: Connect,
    parallel: int = MAX_PARALLEL,
    on_done: Callable[[str], None] | None = None,
) -> tuple[dict[str, SwitchView], dict[str, str]]:
    """Read every switch at once (threads, each bounded by its target's timeout): the views
    of those read, and one line for each that was not."""

    def one(item: tuple[Target, object]) -> tuple[str, SwitchView | str]:
        target, network_os = item
        try:
            view: SwitchView | str = read_switch(target, network_os, connect)
        except SwitchReadError as exc:
            view = str(exc)
        if on_done is not None:
            on_done(target.name)
        return target.name, view

    views: dict[str, SwitchView] = {}
    failed: dict[str, str] = {}
    if not switches:
        return views, failed
    with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(switches)))) as pool:
        for name, got in pool.map(one, switches):
            if isinstance(got, str):
                failed[name] = got
            else:
                views[name] = got
    return views, failed
