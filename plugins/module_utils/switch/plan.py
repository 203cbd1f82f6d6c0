# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The cabling plan (`gpurack_cabling` per server) and a pool's fabric expectations, read and checked.

```yaml
gpurack_cabling:                    # host_vars/<server>/cabling.yml
  mlx5_0: {switch: leaf1, port: Ethernet1/1}
  mlx5_1: {switch: leaf1, port: Ethernet1/2, lldp_port_id: ens2f0np0}
gpurack_fabric: {mtu: 9214, pfc_priority: 3, ecn: true}   # the pool's group_vars (RoCE)
```
LLDP shows a NIC by the port ID its host advertises; `lldp_port_id` names it where that is
not the plan's key (lldpd advertises the netdev, not the RDMA device).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import excerpt
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import canonical_port

_MAC_HEX = 12


def normal_mac(text: object) -> str | None:
    """`text` as a MAC address in lower-case colon form, or None when it is none.

    Takes the usual notations: `9C:63:C0:2F:11:A0`, `9c-63-c0-2f-11-a0`, `9c63.c02f.11a0`,
    `9c63c02f11a0` (lldpcli, Arista, Cisco and bare hex).
    """
    if not isinstance(text, str):
        return None
    digits = "".join(ch for ch in text.strip().lower() if ch not in ":-.")
    if len(digits) != _MAC_HEX or any(ch not in "0123456789abcdef" for ch in digits):
        return None
    return ":".join(digits[i : i + 2] for i in range(0, _MAC_HEX, 2))


class PlanError(ValueError):
    """The cabling plan or the fabric expectations are malformed; the message names the host and key."""


@dataclass(frozen=True)
class Link:
    """One planned cable: a server's NIC to a switch port."""

    server: str
    nic: str
    switch: str
    port: str
    lldp_port_id: str
    # What else the server's LLDP agent may send for this end: a system name the plan declares
    # (`gpurack_lldp_system_name`) and the NIC's MAC addresses (the plan's `mac`, or facts).
    system_names: tuple[str, ...] = ()
    macs: tuple[str, ...] = ()

    def sent_by(self, system: str, port_id: str) -> bool:
        """Whether an LLDP neighbour (its system name and port ID) is this link's server NIC.

        lldpd, the usual agent on Linux servers, sends the host's fully qualified name and, by
        default, the interface's MAC address as the port ID (docs/fabric.md). The system may be
        the inventory name, that name with a domain, or a name the plan declares (any case); the
        port ID the plan's `lldp_port_id` (default: the NIC's name) or one of its MACs.
        """
        if not self.is_system(system):
            return False
        if port_id == self.lldp_port_id:
            return True
        mac = normal_mac(port_id)
        return mac is not None and mac in self.macs

    def is_system(self, system: str) -> bool:
        """Whether an LLDP system name is this link's server (`sent_by`'s first half)."""
        name = system.strip().lower().rstrip(".")
        known = {self.server.lower(), *(n.lower().rstrip(".") for n in self.system_names)}
        return any(name == k or name.startswith(f"{k}.") for k in known)

    def server_end(self) -> str:
        return f"{self.server} {self.nic}"

    def switch_end(self) -> str:
        return f"{self.switch} {self.port}"


@dataclass(frozen=True)
class FabricExpect:
    """What a server's switch ports must show; None where the pool does not say."""

    mtu: int | None = None
    speed_gbps: float | None = None
    pfc_priority: int | None = None
    ecn: bool = False


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise PlanError(f"{where} must be a non-empty string, got {excerpt(value)}")
    return value.strip()


def read_cabling(server: str, cabling: object) -> list[Link]:
    """A server's planned links from its `gpurack_cabling`.

    Raises:
        PlanError: the plan is not a mapping of NIC to {switch, port}.
    """
    if cabling is None:
        return []
    if not isinstance(cabling, Mapping):
        raise PlanError(
            f"{server}: gpurack_cabling must map each NIC to {{switch, port}}, got {excerpt(cabling)}"
        )
    links = []
    for nic, entry in cabling.items():
        where = f"{server}: gpurack_cabling.{nic}"
        if not isinstance(entry, Mapping):
            raise PlanError(f"{where} must be {{switch, port}}, got {excerpt(entry)}")
        unknown = sorted(set(entry) - {"switch", "port", "lldp_port_id", "mac"})
        if unknown:
            raise PlanError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}")
        name = _text(nic, f"{server}: a gpurack_cabling NIC")
        mac = normal_mac(entry["mac"]) if "mac" in entry else None
        if "mac" in entry and mac is None:
            raise PlanError(
                f"{where}.mac must be a MAC address (such as 9c:63:c0:2f:11:a0), got {excerpt(entry['mac'])}"
            )
        links.append(
            Link(
                server=server,
                nic=name,
                switch=_text(entry.get("switch"), f"{where}.switch"),
                port=canonical_port(_text(entry.get("port"), f"{where}.port")),
                lldp_port_id=_text(entry.get("lldp_port_id", name), f"{where}.lldp_port_id"),
                macs=(mac,) if mac else (),
            )
        )
    return links


def read_plan(cabling_by_server: Mapping[str, object], switches: Collection[str] | None = None) -> list[Link]:
    """Every server's links, refused before any switch is contacted when the plan cannot be true:
    a switch that is not in `switches` (the inventory's tor_switches, when given), two NICs on
    one switch port, or one NIC (by name or by the LLDP port ID it advertises) on two ports.

    Raises:
        PlanError: a plan is malformed or impossible; the message names both ends.
    """
    links = [
        link
        for server in sorted(cabling_by_server)
        for link in read_cabling(server, cabling_by_server[server])
    ]
    if switches is not None:
        for link in links:
            if link.switch not in switches:
                raise PlanError(
                    f"{link.server_end()}: switch {excerpt(link.switch)} ({link.switch_end()}) is not in"
                    f" tor_switches ({', '.join(sorted(switches)) or 'none'})"
                )
    ports: dict[tuple[str, str], Link] = {}
    nics: dict[tuple[str, str], Link] = {}
    for link in links:
        other = ports.setdefault((link.switch, link.port), link)
        if other is not link:
            raise PlanError(
                f"{link.switch_end()} is planned for both {other.server_end()} and {link.server_end()}"
            )
        for nic in dict.fromkeys((link.nic, link.lldp_port_id)):
            other = nics.setdefault((link.server, nic), link)
            if other is not link:
                raise PlanError(
                    f"{link.server} {nic} is planned on two ports: {other.switch_end()} ({other.nic})"
                    f" and {link.switch_end()} ({link.nic})"
                )
    return links


def _positive(value: object, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise PlanError(f"{where} must be a positive integer, got {excerpt(value)}")
    return value


def read_expect(server: str, fabric: object, rdma: object) -> FabricExpect:
    """The server's port expectations: MTU, PFC and ECN from its pool's `gpurack_fabric`, the
    speed from `gpurack_expect.rdma.rate_gbps`.

    Raises:
        PlanError: a value is not of its type, or a PFC priority outside 0-7.
    """
    fabric = fabric if fabric is not None else {}
    if not isinstance(fabric, Mapping):
        raise PlanError(f"{server}: gpurack_fabric must be a mapping, got {excerpt(fabric)}")
    unknown = sorted(set(fabric) - {"mtu", "pfc_priority", "ecn"})
    if unknown:
        raise PlanError(f"{server}: gpurack_fabric: unknown key(s) {', '.join(map(str, unknown))}")
    priority = fabric.get("pfc_priority")
    if priority is not None and (
        isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 7
    ):
        raise PlanError(f"{server}: gpurack_fabric.pfc_priority must be 0 to 7, got {excerpt(priority)}")
    ecn = fabric.get("ecn", False)
    if not isinstance(ecn, bool):
        raise PlanError(f"{server}: gpurack_fabric.ecn must be true or false, got {excerpt(ecn)}")
    rate: Any = rdma.get("rate_gbps") if isinstance(rdma, Mapping) else None
    return FabricExpect(
        mtu=_positive(fabric.get("mtu"), f"{server}: gpurack_fabric.mtu"),
        speed_gbps=_positive(rate, f"{server}: gpurack_expect.rdma.rate_gbps"),
        pfc_priority=priority,
        ecn=ecn,
    )
