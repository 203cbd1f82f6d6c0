# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What one switch shows, in one shape for every platform (SwitchView), and its plain-dict form."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

# A setting of a port's running configuration: its line, and the lines nested under it.
Block = tuple[str, tuple[str, ...]]


class SwitchOutputError(ValueError):
    """A switch's command output could not be read; the message names the command."""


# Short interface names as LLDP tables and status tables print them, and their long form as
# the running configuration and the cabling plan spell them.
_LONG_NAMES = (
    ("ethernet", "Ethernet"),
    ("eth", "Ethernet"),
    ("et", "Ethernet"),
    ("swp", "swp"),
)
_PORT = re.compile(r"(?P<prefix>[A-Za-z-]+)(?P<rest>\d.*)")


def canonical_port(name: str) -> str:
    """`Et1/3`, `Eth1/3` and `ethernet1/3` as `Ethernet1/3`; any other name unchanged."""
    match = _PORT.fullmatch(name.strip())
    if match is None:
        return name.strip()
    prefix = match.group("prefix").lower()
    for short, long in _LONG_NAMES:
        if prefix == short:
            return f"{long}{match.group('rest')}"
    return name.strip()


@dataclass(frozen=True)
class Neighbor:
    """One LLDP adjacency as the switch sees it: its port, and the far end's system and port."""

    port: str
    system: str
    remote_port: str


@dataclass(frozen=True)
class Port:
    """A switch port's state; None where the platform's output does not say."""

    name: str
    oper_up: bool
    admin_up: bool
    speed_gbps: float | None = None
    mtu: int | None = None
    input_errors: int | None = None
    output_errors: int | None = None
    description: str = ""


@dataclass(frozen=True)
class RoceSettings:
    """PFC and ECN of a port, as its running configuration sets them. A platform that keeps the
    lossless classes in a QoS policy (NX-OS) leaves `pfc_priorities` empty."""

    pfc: bool = False
    pfc_priorities: tuple[int, ...] = ()
    ecn: bool = False


@dataclass(frozen=True)
class SwitchView:
    """What one switch shows: ports by canonical name, LLDP neighbours, and per-port config lines."""

    name: str
    platform: str
    ports: dict[str, Port] = field(default_factory=dict)
    neighbors: tuple[Neighbor, ...] = ()
    port_config: dict[str, tuple[Block, ...]] = field(default_factory=dict)
    roce: dict[str, RoceSettings] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "platform": self.platform,
            "ports": {name: asdict(port) for name, port in self.ports.items()},
            "neighbors": [asdict(n) for n in self.neighbors],
            "port_config": {
                name: [[head, list(nested)] for head, nested in blocks]
                for name, blocks in self.port_config.items()
            },
            "roce": {
                name: {"pfc": r.pfc, "pfc_priorities": list(r.pfc_priorities), "ecn": r.ecn}
                for name, r in self.roce.items()
            },
        }


def view_from_dict(data: dict[str, Any]) -> SwitchView:
    """The SwitchView that `to_dict` gave (module results come back to the controller as dicts)."""
    return SwitchView(
        name=str(data["name"]),
        platform=str(data["platform"]),
        ports={name: Port(**port) for name, port in data.get("ports", {}).items()},
        neighbors=tuple(Neighbor(**n) for n in data.get("neighbors", [])),
        port_config={
            name: tuple((str(head), tuple(nested)) for head, nested in blocks)
            for name, blocks in data.get("port_config", {}).items()
        },
        roce={
            name: RoceSettings(bool(r.get("pfc")), tuple(r.get("pfc_priorities", ())), bool(r.get("ecn")))
            for name, r in data.get("roce", {}).items()
        },
    )


_SPEED = re.compile(r"(?:a-|auto-)?(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>[GM])(?:b/s|bps)?", re.IGNORECASE)


def parse_speed(text: str) -> float | None:
    """`100G`, `a-400G`, `25Gbps`, `1000M` in Gb/s; None for `auto` or an unknown form."""
    match = _SPEED.fullmatch(text.strip())
    if match is None:
        return None
    value = float(match.group("value"))
    return value if match.group("unit").upper() == "G" else value / 1000
