"""The lab's switch fabric, generated from the lab plan: which switch port each worker NIC is
cabled to (`gpurack_cabling`), and what each switch holds, faults planted.

Worker NICs are cabled round robin over the switches (NIC k of the rack on leaf k mod N,
port k div N + 1). A worker cables its pool's `gpurack_expect.rdma.ports` NICs (mlx5_0..),
else 2. leaf1, leaf3, ... are Arista EOS and leaf2, leaf4, ... Cisco NX-OS, so a lab of two
switches reads both platforms. Each cabled port starts with the pool's fabric settings
(lab/inventory/group_vars/gpu_nodes/fabric.yml) and no description.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch import PortIntent, platform_for
from gpurack.errors import UsageError

from gpurack_lab.fake_switch import EOS, NXOS, port_names
from gpurack_lab.paths import inventory_dir
from gpurack_lab.state import LabHost

SwitchFaultKind = Literal["miscabled", "switch-port-down", "switch-mtu"]
SWITCH_FAULT_KINDS: tuple[SwitchFaultKind, ...] = ("miscabled", "switch-port-down", "switch-mtu")
MAX_SWITCHES = 16
PORTS_PER_SWITCH = 64
PORT_SPEED_GBPS = 400
DEFAULT_NICS = 2
WRONG_MTU = 1500
USERNAME = "admin"


@dataclass(frozen=True, slots=True)
class SwitchFault:
    """A fault on the switch side of one worker NIC: miscabled, its port down, or a wrong MTU."""

    kind: SwitchFaultKind
    host: str
    nic: str

    def __str__(self) -> str:
        return f"{self.kind}@{self.host}:{self.nic}"


def parse_switch_fault(spec: str) -> SwitchFault:
    """Parse `KIND@HOST:NIC` (e.g. `miscabled@lab-w1:mlx5_1`).

    Raises:
        UsageError: not KIND@HOST:NIC, or an unknown kind.
    """
    kind, _, rest = spec.partition("@")
    host, _, nic = rest.partition(":")
    if not host or not nic:
        raise UsageError(f"switch fault {spec!r}: expected KIND@HOST:NIC, e.g. miscabled@lab-w1:mlx5_1")
    for known in SWITCH_FAULT_KINDS:
        if kind == known:
            return SwitchFault(known, host, nic)
    raise UsageError(f"switch fault {spec!r}: unknown kind {kind!r} (known: {', '.join(SWITCH_FAULT_KINDS)})")


def switch_name(number: int) -> str:
    return f"leaf{number}"


def switch_platform(number: int) -> str:
    return EOS if number % 2 else NXOS


def _group_vars(group: str, name: str) -> dict[str, Any]:
    path = inventory_dir() / "group_vars" / group / f"{name}.yml"
    data = yaml.safe_load(path.read_text()) if path.is_file() else None
    return data if isinstance(data, dict) else {}


def fabric_settings() -> dict[str, Any]:
    """The lab pools' `gpurack_fabric` (MTU, PFC priority, ECN)."""
    settings = _group_vars("gpu_nodes", "fabric").get("gpurack_fabric")
    return settings if isinstance(settings, dict) else {}


def nic_names(group: str) -> list[str]:
    """The NICs a worker of this pool group cables: its expected RDMA ports, else 2."""
    rdma = (_group_vars(group, "expect").get("gpurack_expect") or {}).get("rdma") or {}
    ports = rdma.get("ports")
    count = ports if isinstance(ports, int) else DEFAULT_NICS
    return [f"mlx5_{i}" for i in range(count)]


def cabling(workers: Sequence[LabHost], switches: int) -> dict[str, dict[str, dict[str, str]]]:
    """`gpurack_cabling` per worker: NIC -> {switch, port}.

    Raises:
        UsageError: the switches have too few ports for the workers' NICs.
    """
    plan: dict[str, dict[str, dict[str, str]]] = {}
    index = 0
    for host in workers:
        for nic in nic_names(host.group):
            number = index % switches + 1
            slot = index // switches
            if slot >= PORTS_PER_SWITCH - 1:  # the last port of each switch is kept free
                raise UsageError(
                    f"{switches} switches of {PORTS_PER_SWITCH} ports cannot cable every worker NIC"
                )
            port = port_names(switch_platform(number), PORTS_PER_SWITCH)[slot]
            plan.setdefault(host.name, {})[nic] = {"switch": switch_name(number), "port": port}
            index += 1
    return plan


def check_faults(faults: Sequence[SwitchFault], plan: dict[str, dict[str, dict[str, str]]]) -> None:
    """Refuse a fault on a NIC the plan does not cable.

    Raises:
        UsageError: unknown host or NIC.
    """
    for fault in faults:
        if fault.nic not in plan.get(fault.host, {}):
            cabled = ", ".join(f"{h}:{n}" for h in sorted(plan) for n in plan[h]) or "none"
            raise UsageError(
                f"switch fault {fault}: no cabled NIC {fault.host}:{fault.nic} (cabled: {cabled})"
            )


def _initial_config(platform: str, port: str, settings: dict[str, Any]) -> list[list[Any]]:
    intent = PortIntent(
        port=port,
        description="",
        mtu=settings.get("mtu"),
        pfc_priority=settings.get("pfc_priority"),
        ecn=bool(settings.get("ecn")),
    )
    blocks = platform_for(platform).intended(intent)
    return [[head, list(nested)] for head, nested in blocks if not head.startswith("description")]


def _apply_fault(config: list[list[Any]], kind: SwitchFaultKind) -> list[list[Any]]:
    if kind == "switch-mtu":
        return [
            [f"mtu {WRONG_MTU}", []] if head.startswith("mtu ") else [head, nested] for head, nested in config
        ]
    if kind == "switch-port-down":
        return [*config, ["shutdown", []]]
    return config


def _cabled_ports(
    plan: dict[str, dict[str, dict[str, str]]],
    switches: int,
    faults: Sequence[SwitchFault],
    settings: dict[str, Any],
) -> dict[tuple[str, str], dict[str, Any]]:
    """Every switch port by (switch, port): its starting config and the NIC LLDP sees on it."""
    ports: dict[tuple[str, str], dict[str, Any]] = {}
    for number in range(1, switches + 1):
        for name in port_names(switch_platform(number), PORTS_PER_SWITCH):
            ports[(switch_name(number), name)] = {
                "name": name,
                "speed_gbps": PORT_SPEED_GBPS,
                "config": [],
                "neighbor": None,
            }
    broken = {(f.host, f.nic): f.kind for f in faults}
    for host, nics in plan.items():
        for nic, link in nics.items():
            number = int(link["switch"].removeprefix("leaf"))
            port = ports[(link["switch"], link["port"])]
            port["config"] = _initial_config(switch_platform(number), link["port"], settings)
            kind = broken.get((host, nic))
            if kind is not None:
                port["config"] = _apply_fault(port["config"], kind)
            if kind == "miscabled":
                # The cable went into the last port of the next switch instead.
                other = number % switches + 1
                spare = port_names(switch_platform(other), PORTS_PER_SWITCH)[-1]
                ports[(switch_name(other), spare)]["neighbor"] = [host, nic]
                ports[(switch_name(other), spare)]["config"] = _initial_config(
                    switch_platform(other), spare, settings
                )
            else:
                port["neighbor"] = [host, nic]
    return ports


def build_spec(
    workers: Sequence[LabHost],
    switches: int,
    faults: Sequence[SwitchFault],
    ssh_ports: Sequence[int],
    password: str,
) -> dict[str, Any]:
    """What the switch server serves: every switch's ports, settings and neighbours.

    Raises:
        UsageError: a bad switch count, or a fault on a NIC the plan does not cable.
    """
    if not 1 <= switches <= MAX_SWITCHES:
        raise UsageError(f"--switches must be between 1 and {MAX_SWITCHES}, got {switches}")
    plan = cabling(workers, switches)
    check_faults(faults, plan)
    settings = fabric_settings()
    ports = _cabled_ports(plan, switches, faults, settings)
    entries = [
        {
            "name": switch_name(number),
            "platform": switch_platform(number),
            "port": ssh_ports[number - 1],
            "ports": [
                ports[(switch_name(number), n)] for n in port_names(switch_platform(number), PORTS_PER_SWITCH)
            ],
        }
        for number in range(1, switches + 1)
    ]
    fingerprint = hashlib.sha256(
        json.dumps([plan, [str(f) for f in faults], settings], sort_keys=True).encode()
    ).hexdigest()[:16]
    return {
        "fingerprint": fingerprint,
        "username": USERNAME,
        "password": password,
        "switches": entries,
        "cabling": plan,
    }
