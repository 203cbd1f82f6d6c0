# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Network interfaces and RDMA ports: sys/class/net, sys/class/infiniband, `ibstat`.

Pure functions only (stdlib); `gather_nic` builds `gpurack_nic` as documented in
docs/facts.md. sysfs wins where it and ibstat both know a value; ibstat adds the GUIDs
and stands in for sysfs when a capture has no infiniband tree.
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError, excerpt
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.digits import refuse_long_numbers
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import Source
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.view import FactView

IBSTAT_ARGV: tuple[str, ...] = ("ibstat",)
SYSFS_NET = "sys/class/net"
SYSFS_IB = "sys/class/infiniband"

_STATE = re.compile(r"^(?P<code>\d+):\s*(?P<name>\S+)$")
_RATE = re.compile(r"^(?P<gbps>\d+(?:\.\d+)?)\s*Gb/sec\b")
_CA = re.compile(r"^CA '(?P<name>[^']+)'\s*$")
_PORT = re.compile(r"^Port (?P<port>\d+):\s*$")
_KEY_VALUE = re.compile(r"^(?P<key>[A-Za-z][A-Za-z ]*):\s*(?P<value>.*)$")
# ibstat prints the logical port state in words; sysfs (and our facts) use the kernel names.
_IBSTAT_STATES = {"Down": "DOWN", "Initializing": "INIT", "Armed": "ARMED", "Active": "ACTIVE"}


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


def parse_port_state(text: str, name: str = "state") -> str:
    """`4: ACTIVE` -> `ACTIVE` (also phys_state: `5: LinkUp` -> `LinkUp`).

    Raises:
        FactsError: not `<code>: <name>`.
    """
    match = _STATE.match(text.strip())
    if match is None:
        raise FactsError(f"{name}: expected '<code>: <NAME>', found {excerpt(text.strip())}")
    return match.group("name")


def parse_rate(text: str, name: str = "rate") -> int | float:
    """`400 Gb/sec (4X NDR)` -> 400; `2.5 Gb/sec (1X SDR)` -> 2.5.

    Raises:
        FactsError: no `<n> Gb/sec`.
    """
    match = _RATE.match(text.strip())
    if match is None:
        raise FactsError(f"{name}: expected '<n> Gb/sec ...', found {excerpt(text.strip())}")
    return _number(match.group("gbps"))


def normalize_guid(text: str | None) -> str | None:
    """sysfs `a088:c203:00e3:142a` and ibstat `0xa088c20300e3142a` -> `0xa088c20300e3142a`.

    Raises:
        FactsError: not hexadecimal.
    """
    if text is None or not text.strip():
        return None
    value = text.strip().lower().replace(":", "")
    value = value if value.startswith("0x") else f"0x{value}"
    try:
        number = int(value, 16)
    except ValueError as exc:
        raise FactsError(f"GUID {excerpt(text.strip())} is not hexadecimal") from exc
    # RoCE ports report an all-zero port GUID: there is none.
    return None if number == 0 else value


def parse_counters(texts: dict[str, str | None], base: str = "counters") -> dict[str, int | None]:
    """Port counters as ints (None where the file could not be read).

    Raises:
        FactsError: a counter holds something other than an integer.
    """
    counters: dict[str, int | None] = {}
    for key, text in sorted(texts.items()):
        if text is None or not text.strip():
            counters[key] = None
            continue
        try:
            counters[key] = int(text.strip())
        except ValueError as exc:
            raise FactsError(f"{base}/{key}: expected an integer, found {excerpt(text.strip())}") from exc
    return counters


def _new_ca(name: str) -> dict[str, Any]:
    return {
        "device": name,
        "ca_type": None,
        "num_ports": None,
        "fw_ver": None,
        "hw_ver": None,
        "node_guid": None,
        "system_image_guid": None,
        "ports": [],
    }


_CA_KEYS = {
    "CA type": "ca_type",
    "Firmware version": "fw_ver",
    "Hardware version": "hw_ver",
    "Node GUID": "node_guid",
    "System image GUID": "system_image_guid",
}


def _port_entry(ca: str, port: int, values: dict[str, str]) -> dict[str, Any]:
    where = f"ibstat: CA '{ca}' port {port}"
    state = values.get("State")
    rate = values.get("Rate")
    try:
        rate_gbps = _number(rate) if rate else None
    except ValueError as exc:
        raise FactsError(f"{where}: Rate {excerpt(rate)} is not a number") from exc
    return {
        "port": port,
        "state": _IBSTAT_STATES.get(state, state.upper()) if state else None,
        "phys_state": values.get("Physical state") or None,
        "rate_gbps": rate_gbps,
        "link_layer": values.get("Link layer") or None,
        "port_guid": normalize_guid(values.get("Port GUID")),
        "base_lid": int(values["Base lid"]) if values.get("Base lid", "").isdecimal() else None,
        "sm_lid": int(values["SM lid"]) if values.get("SM lid", "").isdecimal() else None,
    }


def _set_ca_value(ca: dict[str, Any], key: str, value: str) -> None:
    """One `Key: value` line of a CA (outside its port sections)."""
    if key == "Number of ports":
        if not value.isdecimal():
            raise FactsError(f"ibstat: CA '{ca['device']}' has 'Number of ports: {value}'")
        ca["num_ports"] = int(value)
    elif key in _CA_KEYS:
        ca[_CA_KEYS[key]] = normalize_guid(value) if "GUID" in key else value


def parse_ibstat(text: str) -> list[dict[str, Any]]:
    """CAs of `ibstat` text, each with its ports (indentation may be tabs or spaces).

    Raises:
        FactsError: text outside a CA, a CA without ports, or a port count that does not
            match 'Number of ports'.
    """
    refuse_long_numbers(text, "ibstat")
    cas: list[dict[str, Any]] = []
    ca: dict[str, Any] | None = None
    port_values: dict[str, str] | None = None
    port_no = 0

    def close_port() -> None:
        nonlocal port_values
        if ca is not None and port_values is not None:
            ca["ports"].append(_port_entry(ca["device"], port_no, port_values))
        port_values = None

    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if match := _CA.match(line):
            close_port()
            ca = _new_ca(match.group("name"))
            cas.append(ca)
            continue
        if ca is None:
            raise FactsError(f"ibstat: line {lineno} is outside any CA: {excerpt(line)}")
        if match := _PORT.match(line):
            close_port()
            port_no, port_values = int(match.group("port")), {}
            continue
        kv = _KEY_VALUE.match(line)
        if kv is None:
            raise FactsError(
                f"ibstat: line {lineno} of CA '{ca['device']}' is not 'Key: value': {excerpt(line)}"
            )
        key, value = kv.group("key").strip(), kv.group("value").strip()
        if port_values is not None:
            port_values[key] = value
        else:
            _set_ca_value(ca, key, value)
    close_port()
    _check_port_counts(cas)
    return cas


def _check_port_counts(cas: list[dict[str, Any]]) -> None:
    """Refuse a CA without ports, or with fewer or more than its 'Number of ports' says."""
    for entry in cas:
        if not entry["ports"]:
            raise FactsError(f"ibstat: CA '{entry['device']}' lists no ports (output truncated?)")
        if entry["num_ports"] is not None and entry["num_ports"] != len(entry["ports"]):
            raise FactsError(
                f"ibstat: CA '{entry['device']}' says 'Number of ports: {entry['num_ports']}' "
                f"but {len(entry['ports'])} port sections"
            )


def _strip(text: str | None) -> str | None:
    if text is None:
        return None
    return text.strip() or None


def _int_attr(source: Source, path: str) -> int | None:
    text = _strip(source.read(path))
    if text is None:
        return None
    try:
        return int(text)
    except ValueError as exc:
        raise FactsError(f"{path}: expected an integer, found {excerpt(text)}") from exc


def read_net(source: Source) -> list[dict[str, Any]]:
    """Interfaces of sys/class/net except lo.

    Raises:
        FactsError: mtu is not an integer.
    """
    interfaces = []
    for name in source.listdir(SYSFS_NET):
        if name == "lo":
            continue
        base = f"{SYSFS_NET}/{name}"
        # speed is -1 (or unreadable: EINVAL) when the link is down or the driver cannot say.
        speed_text = _strip(source.read(f"{base}/speed"))
        numeric = speed_text and len(speed_text) <= 20 and speed_text.lstrip("-").isdecimal()
        speed = int(speed_text) if speed_text and numeric else None
        interfaces.append(
            {
                "name": name,
                "address": _strip(source.read(f"{base}/address")),
                "mtu": _int_attr(source, f"{base}/mtu"),
                "operstate": _strip(source.read(f"{base}/operstate")),
                "speed_mbps": speed if speed is not None and speed > 0 else None,
            }
        )
    return interfaces


def _port_sort_key(name: str) -> tuple[int, str]:
    return (int(name), "") if name.isdecimal() else (1 << 30, name)


def read_infiniband(source: Source) -> list[dict[str, Any]]:
    """One entry per (device, port) of sys/class/infiniband.

    Raises:
        FactsError: a state, phys_state, rate or counter file is malformed.
    """
    ports: list[dict[str, Any]] = []
    for device in source.listdir(SYSFS_IB):
        base = f"{SYSFS_IB}/{device}"
        common = {
            "fw_ver": _strip(source.read(f"{base}/fw_ver")),
            "board_id": _strip(source.read(f"{base}/board_id")),
            "hca_type": _strip(source.read(f"{base}/hca_type")),
            "node_guid": normalize_guid(source.read(f"{base}/node_guid")),
        }
        numa = _int_attr(source, f"{base}/device/numa_node")
        for port in sorted(source.listdir(f"{base}/ports"), key=_port_sort_key):
            pbase = f"{base}/ports/{port}"
            state = _strip(source.read(f"{pbase}/state"))
            phys = _strip(source.read(f"{pbase}/phys_state"))
            rate = _strip(source.read(f"{pbase}/rate"))
            counter_names = source.listdir(f"{pbase}/counters")
            ports.append(
                {
                    "device": device,
                    "port": int(port) if port.isdecimal() else port,
                    "state": parse_port_state(state, f"{pbase}/state") if state else None,
                    "phys_state": parse_port_state(phys, f"{pbase}/phys_state") if phys else None,
                    "rate_gbps": parse_rate(rate, f"{pbase}/rate") if rate else None,
                    "link_layer": _strip(source.read(f"{pbase}/link_layer")),
                    **common,
                    "port_guid": None,
                    "numa_node": numa if numa is not None and numa >= 0 else None,
                    "counters": parse_counters(
                        {c: source.read(f"{pbase}/counters/{c}") for c in counter_names},
                        f"{pbase}/counters",
                    ),
                }
            )
    return ports


def rdma_from_ibstat(cas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`rdma` entries built from ibstat alone (no board id, NUMA node or counters)."""
    return [
        {
            "device": ca["device"],
            "port": port["port"],
            "state": port["state"],
            "phys_state": port["phys_state"],
            "rate_gbps": port["rate_gbps"],
            "link_layer": port["link_layer"],
            "fw_ver": ca["fw_ver"],
            "board_id": None,
            "hca_type": ca["ca_type"],
            "node_guid": ca["node_guid"],
            "port_guid": port["port_guid"],
            "numa_node": None,
            "counters": None,
        }
        for ca in cas
        for port in ca["ports"]
    ]


def merge_rdma(sysfs: list[dict[str, Any]], ibstat: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """sysfs entries with null fields filled from the matching ibstat (device, port)."""
    if not sysfs:
        return rdma_from_ibstat(ibstat)
    by_key = {(e["device"], e["port"]): e for e in rdma_from_ibstat(ibstat)}
    merged = []
    for entry in sysfs:
        other = by_key.get((entry["device"], entry["port"]), {})
        merged.append({k: (v if v is not None else other.get(k)) for k, v in entry.items()})
    return merged


def gather_nic(source: Source) -> dict[str, Any]:
    """`gpurack_nic` for one node.

    Raises:
        FactsError: sysfs or ibstat output is malformed.
    """
    net = read_net(source)
    sysfs_rdma = read_infiniband(source)
    out = source.run(IBSTAT_ARGV)
    ibstat_ok = out.rc == 0
    cas = parse_ibstat(out.stdout) if ibstat_ok else []
    rdma = merge_rdma(sysfs_rdma, cas)
    sources = (
        ([SYSFS_NET] if net else []) + ([SYSFS_IB] if sysfs_rdma else []) + (["ibstat"] if ibstat_ok else [])
    )
    facts: dict[str, Any] = {
        "available": bool(net or rdma),
        "sources": sources,
        "net": net,
        "rdma": rdma,
        "ibstat_available": ibstat_ok,
    }
    if not facts["available"]:
        facts["reason"] = f"{SYSFS_NET} and {SYSFS_IB} are empty and ibstat gave nothing"
    return facts


# ---------------------------------------------------------------------------------------
# views: what the functions above produce, for consumers (checks, measured tiers)


class RdmaPortView(FactView):
    """One `gpurack_nic.rdma[]` port."""

    FIELDS = frozenset(
        {"device", "port", "state", "phys_state", "rate_gbps", "link_layer", "numa_node", "counters"}
    )

    def component(self) -> str:
        """`mlx5_5 port 1`, the component name of every port result."""
        return f"{self.field('device')} port {self.field('port')}"


class NicFactsView(FactView):
    """`gpurack_nic` as `gather_nic` returns it."""

    FACT = "gpurack_nic"
    FIELDS = frozenset({"available", "reason", "sources", "net", "rdma"})

    def rdma(self) -> list[RdmaPortView]:
        """Every RDMA port."""
        return self.items("rdma", RdmaPortView)
