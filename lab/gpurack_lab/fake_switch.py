"""A lab switch's state and its CLI: the show commands gpurack reads, printed as Arista EOS or
Cisco NX-OS print them, and a config mode that changes the running configuration.

A port is up when it is not shut down and a cable is in it (the plan gave it a neighbour);
LLDP shows the neighbour of every port that is up. Its MTU and speed are what its running
configuration sets (1500 and the port's native speed otherwise), so `gpurack fabric apply`
changes what the next `show interfaces` prints. The outputs follow the two platforms'
formats closely enough for ntc-templates, as the parsers in the collection read them.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch import (
    Block,
    canonical_port,
    section_text,
    setting_key,
)

EOS = "arista_eos"
NXOS = "cisco_nxos"
DEFAULT_MTU = 1500
# Settings that open a nested mode (EOS's `tx-queue N`): the lines after them belong to them.
_NESTED = ("tx-queue ",)
_MTU = re.compile(r"^mtu (\d+)$")
_EOS_SPEED = re.compile(r"^speed forced (\d+)gfull$")
_NXOS_SPEED = re.compile(r"^speed (\d+)$")
# A port's block in each platform's interface listing: its first lines by state, then the rest.
_INTERFACE_HEAD = {
    EOS: {
        "disabled": "{name} is administratively down, line protocol is down (disabled)\n",
        "up": "{name} is up, line protocol is up (connected)\n",
        "down": "{name} is down, line protocol is down (notconnect)\n",
    },
    NXOS: {
        "disabled": "{name} is down (Administratively down)\nadmin state is down, Dedicated Interface\n",
        "up": "{name} is up\nadmin state is up, Dedicated Interface\n",
        "down": "{name} is down (Link not connected)\nadmin state is up, Dedicated Interface\n",
    },
}
_INTERFACE_BODY = {
    EOS: "  Hardware is Ethernet, address is 001c.7300.0001 (bia 001c.7300.0001)\n"
    "{description}"
    "  Ethernet MTU {mtu} bytes , BW {bandwidth} kbit\n"
    "  Full-duplex, {speed}Gb/s, auto negotiation: off, uni-link: n/a\n"
    "     0 input errors, 0 CRC, 0 alignment, 0 symbol, 0 input discards\n"
    "     0 output errors, 0 collisions\n",
    NXOS: "  Hardware: 100000/400000 Ethernet, address: 5254.0012.0001 (bia 5254.0012.0001)\n"
    "{description}"
    "  MTU {mtu} bytes, BW {bandwidth} Kbit , DLY 10 usec\n"
    "  full-duplex, {speed} Gb/s, media type is 400G\n"
    "  RX\n    0 input error  0 short frame  0 overrun   0 underrun  0 ignored\n"
    "  TX\n    0 output error  0 collision  0 deferred  0 late collision\n",
}


@dataclass
class FakePort:
    """One switch port: its native speed, running settings and the cable's far end."""

    name: str
    speed_gbps: int
    config: list[Block] = field(default_factory=list)
    neighbor: tuple[str, str] | None = None  # (system, port id) of what is cabled here

    @property
    def admin_up(self) -> bool:
        return not any(head == "shutdown" for head, _ in self.config)

    @property
    def oper_up(self) -> bool:
        return self.admin_up and self.neighbor is not None

    def setting(self, pattern: re.Pattern[str]) -> int | None:
        for head, _ in self.config:
            match = pattern.match(head)
            if match:
                return int(match.group(1))
        return None

    def description(self) -> str:
        return next((head.split(" ", 1)[1] for head, _ in self.config if head.startswith("description ")), "")


@dataclass
class FakeSwitch:
    """A lab switch: name, platform and ports; safe for several SSH sessions at once."""

    name: str
    platform: str
    ports: dict[str, FakePort]
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # -- the show commands ---------------------------------------------------------------

    def show(self, command: str) -> str | None:
        """The output of a show command, None for one this switch does not know."""
        with self.lock:
            if command == "show lldp neighbors":
                return self._lldp_eos() if self.platform == EOS else self._lldp_nxos()
            if command == "show running-config":
                return self._running()
            if self.platform == EOS and command == "show interfaces":
                return "".join(self._interface(p) for p in self.ports.values())
            if self.platform == NXOS and command == "show interface":
                return "\n".join(self._interface(p) for p in self.ports.values())
        return None

    def _speed(self, port: FakePort) -> int:
        forced = port.setting(_EOS_SPEED if self.platform == EOS else _NXOS_SPEED)
        if forced is None:
            return port.speed_gbps
        return forced if self.platform == EOS else forced // 1000

    def _lldp_eos(self) -> str:
        rows = [
            f"{_short_eos(p.name):<13} {p.neighbor[0]:<24} {p.neighbor[1]:<22} 120"
            for p in self.ports.values()
            if p.oper_up and p.neighbor
        ]
        return (
            "Last table change time   : 0:00:42 ago\nNumber of table inserts  : "
            f"{len(rows)}\nNumber of table deletes  : 0\nNumber of table drops    : 0\n"
            "Number of table age-outs : 0\n\n"
            "Port          Neighbor Device ID       Neighbor Port ID    TTL\n"
            "---------- ------------------------ ---------------------- ---\n" + "\n".join(rows) + "\n"
        )

    def _lldp_nxos(self) -> str:
        rows = [
            f"{p.neighbor[0]:<20} {_short_nxos(p.name):<15} {'120':<10} {'S':<11} {p.neighbor[1]}"
            for p in self.ports.values()
            if p.oper_up and p.neighbor
        ]
        return (
            "Capability codes:\n  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device\n"
            "  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other\n"
            "Device ID            Local Intf      Hold-time  Capability  Port ID\n"
            + "".join(row + "\n" for row in rows)
            + f"\nTotal entries displayed: {len(rows)}\n"
        )

    def _interface(self, port: FakePort) -> str:
        """One port's block of `show interfaces` (EOS) or `show interface` (NX-OS)."""
        state = "disabled" if not port.admin_up else ("up" if port.oper_up else "down")
        speed = self._speed(port)
        description = f"  Description: {port.description()}\n" if port.description() else ""
        head = _INTERFACE_HEAD[self.platform][state].format(name=port.name)
        body = _INTERFACE_BODY[self.platform].format(
            description=description,
            mtu=port.setting(_MTU) or DEFAULT_MTU,
            bandwidth=speed * 1_000_000,
            speed=speed,
        )
        return head + body

    def _running(self) -> str:
        if self.platform == EOS:
            head = f"! Command: show running-config\n!\nhostname {self.name}\n!\n"
            body = "!\n".join(section_text(p.name, p.config) for p in self.ports.values())
            return head + body + "!\nend\n"
        sections = "\n".join(
            section_text(p.name, p.config).replace("\n   ", "\n  ") for p in self.ports.values()
        )
        return f"!Command: show running-config\n\nhostname {self.name}\n\n{sections}"

    # -- config mode -----------------------------------------------------------------------

    def configure(self, port_name: str, line: str, nested_under: str | None) -> str | None:
        """Apply one config-mode line to a port; the setting it opened when it opens a nested
        mode. `nested_under` is the setting whose nested mode the line is in."""
        with self.lock:
            port = self.ports[port_name]
            if nested_under is not None:
                for i, (head, nested) in enumerate(port.config):
                    if head == nested_under and line not in nested:
                        port.config[i] = (head, (*nested, line))
                return nested_under
            if line.startswith("no "):
                key = setting_key(line[3:])
                port.config = [b for b in port.config if setting_key(b[0]) != key]
                return None
            key = setting_key(line)
            kept = [b for b in port.config if setting_key(b[0]) != key or b[0] == line]
            if not any(head == line for head, _ in kept):
                kept.append((line, ()))
            port.config = kept
            return line if line.startswith(_NESTED) else None

    def port_named(self, name: str) -> str | None:
        """The port a config-mode `interface NAME` picks, by its canonical name."""
        canonical = canonical_port(name)
        return canonical if canonical in self.ports else None

    # -- state on disk ---------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "platform": self.platform,
            "ports": [
                {
                    "name": p.name,
                    "speed_gbps": p.speed_gbps,
                    "config": [[head, list(nested)] for head, nested in p.config],
                    "neighbor": list(p.neighbor) if p.neighbor else None,
                }
                for p in self.ports.values()
            ],
        }


def switch_from_dict(data: dict[str, Any]) -> FakeSwitch:
    """The FakeSwitch that `to_dict` wrote."""
    ports = {}
    for raw in data["ports"]:
        neighbor = raw.get("neighbor")
        ports[raw["name"]] = FakePort(
            name=raw["name"],
            speed_gbps=int(raw["speed_gbps"]),
            config=[(str(head), tuple(nested)) for head, nested in raw.get("config", [])],
            neighbor=(str(neighbor[0]), str(neighbor[1])) if neighbor else None,
        )
    return FakeSwitch(name=data["name"], platform=data["platform"], ports=ports)


def _short_nxos(name: str) -> str:
    return "Eth" + name[len("Ethernet") :] if name.startswith("Ethernet") else name


def _short_eos(name: str) -> str:
    return "Et" + name[len("Ethernet") :] if name.startswith("Ethernet") else name


def save_startup(switch: FakeSwitch, path: Path, fingerprint: str) -> None:
    """`copy running-config startup-config`: the switch as it is now, for its next start."""
    with switch.lock:
        data = {"fingerprint": fingerprint, "switch": switch.to_dict()}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(path)


def load_startup(path: Path, fingerprint: str) -> FakeSwitch | None:
    """The saved switch, when it was saved from the same lab plan (fingerprint)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if data.get("fingerprint") != fingerprint:
        return None
    return switch_from_dict(data["switch"])


def port_names(platform: str, count: int) -> Sequence[str]:
    """The front-panel ports of a switch of `count` ports: Ethernet1.. (EOS), Ethernet1/1.. (NX-OS)."""
    return [f"Ethernet{i}" if platform == EOS else f"Ethernet1/{i}" for i in range(1, count + 1)]
