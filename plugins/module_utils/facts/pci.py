# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""PCI devices and their link state: `lspci -vvv` first, sysfs to fill ids and as fallback.

Pure functions only (stdlib); `gather_pci` builds `gpurack_pci` as documented in
docs/facts.md.
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import plausible
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.digits import refuse_long_numbers
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import Source

LSPCI_ARGV: tuple[str, ...] = ("lspci", "-vvv")
SYSFS_PCI = "sys/bus/pci/devices"

_LSPCI = "lspci -vvv"
_BUS_ID = re.compile(
    r"^(?:(?:PCI:)?(?P<domain>[0-9a-fA-F]{4,8}):)?(?P<bus>[0-9a-fA-F]{2}):(?P<dev>[0-9a-fA-F]{2})"
    r"(?:\.(?P<fn>[0-7]))?$"
)
_HEADER = re.compile(
    r"^(?P<bus_id>(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) (?P<desc>\S.*)$"
)
# `lspci -nn` style ids inside the description: "3D controller [0302]: ... [10de:2330] (rev a1)".
_NN_CLASS = re.compile(r"^[^\[]*\[(?P<cls>[0-9a-f]{4})\]:")
_NN_IDS = re.compile(r"\[(?P<vendor>[0-9a-f]{4}):(?P<device>[0-9a-f]{4})\]")
_LNKCAP = re.compile(r"^\s+LnkCap:\s")
_LNKSTA = re.compile(r"^\s+LnkSta:\s")
_NUMA = re.compile(r"^\s+NUMA node:\s*(?P<node>-?\d+)\s*$")
# A bridge's buses: "Bus: primary=15, secondary=16, subordinate=1c, sec-latency=0".
_BRIDGE_BUS = re.compile(r"^\s+Bus: primary=[0-9a-fA-F]+, secondary=(?P<secondary>[0-9a-fA-F]+),")
_SPEED = re.compile(r"Speed (?:(?P<speed>\d+(?:\.\d+)?)GT/s|unknown)(?: \((?P<mark>ok|downgraded)\))?")
_WIDTH = re.compile(r"Width x(?P<width>\d+)(?: \((?P<mark>ok|downgraded)\))?")
_SYSFS_SPEED = re.compile(r"^(?P<speed>\d+(?:\.\d+)?) GT/s")


def normalize_bus_id(text: str) -> str | None:
    """Return a PCI address in sysfs form (`0000:19:00.0`), None when `text` is not one.

    Accepts lspci's `19:00.0`, nvidia-smi's `00000000:19:00.0` and the kernel log's
    `PCI:0000:9b:00` (no function: function 0).
    """
    match = _BUS_ID.match(text.strip())
    if match is None:
        return None
    domain = (match.group("domain") or "0000")[-4:]
    fn = match.group("fn") or "0"
    return f"{domain}:{match.group('bus')}:{match.group('dev')}.{fn}".lower()


def _parse_link_line(line: str, bus_id: str, what: str) -> tuple[float | None, int, bool | None, bool | None]:
    """(speed GT/s, width, speed marker, width marker) of one LnkCap/LnkSta line.

    Raises:
        FactsError: no Speed or Width, or a rate or width no PCIe link has (LnkSta may say
            x0: a link that did not train).
    """
    speed = _SPEED.search(line)
    width = _WIDTH.search(line)
    if speed is None or width is None:
        missing = "Speed" if speed is None else "Width"
        raise FactsError(f"{_LSPCI}: {bus_id} {what} line has no {missing}: {line.strip()[:80]!r}")
    where = f"{_LSPCI}: {bus_id}"
    gts = float(speed.group("speed")) if speed.group("speed") else None
    plausible.link_speed(gts, where, f"{what} speed")
    plausible.link_width(int(width.group("width")), where, f"{what} width", link_down_ok=what == "LnkSta")
    speed_mark = None if speed.group("mark") is None else speed.group("mark") == "downgraded"
    width_mark = None if width.group("mark") is None else width.group("mark") == "downgraded"
    return gts, int(width.group("width")), speed_mark, width_mark


def _below(current: float | None, capability: float | None) -> bool:
    return current is not None and capability is not None and current < capability


def make_link(
    cap_speed: float | None,
    cap_width: int | None,
    sta_speed: float | None,
    sta_width: int | None,
    *,
    speed_mark: bool | None = None,
    width_mark: bool | None = None,
) -> dict[str, Any]:
    """The `link` dict; lspci's (ok)/(downgraded) markers win over comparing the numbers."""
    return {
        "cap_speed_gts": cap_speed,
        "cap_width": cap_width,
        "sta_speed_gts": sta_speed,
        "sta_width": sta_width,
        "speed_downgraded": speed_mark if speed_mark is not None else _below(sta_speed, cap_speed),
        "width_downgraded": width_mark if width_mark is not None else _below(sta_width, cap_width),
    }


def _new_device(bus_id: str, desc: str) -> dict[str, Any]:
    cls = _NN_CLASS.match(desc)
    ids = _NN_IDS.findall(desc)
    vendor, device = ids[-1] if ids else (None, None)
    return {
        "bus_id": bus_id,
        "description": desc,
        "vendor_id": f"0x{vendor}" if vendor else None,
        "device_id": f"0x{device}" if device else None,
        "class_id": f"0x{cls.group('cls')}" if cls else None,
        "numa_node": None,
        "link": None,
        "upstream": None,
    }


def _finish(device: dict[str, Any], cap: tuple[Any, ...] | None, sta: tuple[Any, ...] | None) -> None:
    if cap is None and sta is None:
        return
    if sta is None:
        raise FactsError(f"{_LSPCI}: {device['bus_id']} has LnkCap but no LnkSta (output truncated?)")
    cap_speed, cap_width = (cap[0], cap[1]) if cap else (None, None)
    device["link"] = make_link(cap_speed, cap_width, sta[0], sta[1], speed_mark=sta[2], width_mark=sta[3])


def _bus_id(header: re.Match[str], lineno: int) -> str:
    bus_id = normalize_bus_id(header.group("bus_id"))
    if bus_id is None:  # the header regex only matches bus ids
        raise FactsError(f"{_LSPCI}: line {lineno}: {header.group('bus_id')!r} is no PCI bus id")
    return bus_id


def parse_lspci_vvv(text: str) -> list[dict[str, Any]]:
    """Devices of `lspci -vvv` (ids only when the output carries `-nn` style brackets).

    Raises:
        FactsError: a line outside any device, or a LnkCap/LnkSta line without Speed or
            Width, or a LnkCap without its LnkSta (truncated output).
    """
    refuse_long_numbers(text, _LSPCI)
    devices: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    cap: tuple[Any, ...] | None = None
    sta: tuple[Any, ...] | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if not line[0].isspace():
            header = _HEADER.match(line)
            if header is None:
                # pciutils prints warnings such as "pcilib: sysfs_read_vpd: read failed" on stderr.
                if line.startswith(("pcilib:", "lspci:")):
                    continue
                raise FactsError(f"{_LSPCI}: line {lineno} is not a device header: {line[:80]!r}")
            if current is not None:
                _finish(current, cap, sta)
            current, cap, sta = _new_device(_bus_id(header, lineno), header.group("desc").strip()), None, None
            devices.append(current)
            continue
        if current is None:
            raise FactsError(f"{_LSPCI}: line {lineno} is indented but no device started: {line[:80]!r}")
        if _LNKCAP.match(line):
            cap = _parse_link_line(line, current["bus_id"], "LnkCap")
        elif _LNKSTA.match(line):
            sta = _parse_link_line(line, current["bus_id"], "LnkSta")
        elif numa := _NUMA.match(line):
            node = int(numa.group("node"))
            current["numa_node"] = node if node >= 0 else None
    if current is not None:
        _finish(current, cap, sta)
    secondary = _bridge_buses(text)
    for device in devices:
        domain, bus_number = device["bus_id"][:4], int(device["bus_id"][5:7], 16)
        device["upstream"] = secondary.get((domain, bus_number))
    return devices


def _bridge_buses(text: str) -> dict[tuple[str, int], str]:
    """(domain, bus number) -> the bridge whose secondary bus it is, from lspci's `Bus:` lines."""
    found: dict[tuple[str, int], str] = {}
    current: str | None = None
    for line in text.splitlines():
        if line and not line[0].isspace():
            header = _HEADER.match(line)
            current = normalize_bus_id(header.group("bus_id")) if header else None
        elif current is not None and (bus := _BRIDGE_BUS.match(line)):
            found[(current[:4], int(bus.group("secondary"), 16))] = current
    return found


def parse_sysfs_speed(text: str | None, where: str = SYSFS_PCI) -> float | None:
    """`32.0 GT/s PCIe` -> 32.0; empty, `Unknown` or absent -> None.

    Raises:
        FactsError: a rate no PCIe generation has.
    """
    if text is None:
        return None
    match = _SYSFS_SPEED.match(text.strip())
    return plausible.link_speed(float(match.group("speed")), where, "link speed") if match else None


def _sysfs_int(text: str | None, path: str) -> int | None:
    if text is None or not text.strip():
        return None
    try:
        return int(text.strip(), 0)
    except ValueError as exc:
        raise FactsError(f"{path}: expected an integer, found {text.strip()!r}") from exc


def _sysfs_hex(text: str | None, digits: int) -> str | None:
    if text is None or not text.strip():
        return None
    value = text.strip().lower()
    return value[: 2 + digits] if value.startswith("0x") else None


def parse_sysfs_pci_device(bus_id: str, attrs: dict[str, str | None]) -> dict[str, Any]:
    """One device from its sysfs attribute texts (keys: vendor, device, class, numa_node,
    current_link_speed, max_link_speed, current_link_width, max_link_width; None = absent).

    Raises:
        FactsError: numa_node or a link width is not an integer, or a rate or width no PCIe
            link has (the current width may be 0: a link that did not train).
    """
    base = f"{SYSFS_PCI}/{bus_id}"
    numa = _sysfs_int(attrs.get("numa_node"), f"{base}/numa_node")
    link_texts = [attrs.get(k) for k in ("current_link_speed", "max_link_speed")]
    widths = [attrs.get(k) for k in ("current_link_width", "max_link_width")]
    link: dict[str, Any] | None = None
    if any(t is not None and t.strip() for t in link_texts + widths):
        cap_width = _sysfs_int(attrs.get("max_link_width"), f"{base}/max_link_width")
        sta_width = _sysfs_int(attrs.get("current_link_width"), f"{base}/current_link_width")
        link = make_link(
            parse_sysfs_speed(attrs.get("max_link_speed"), f"{base}/max_link_speed"),
            plausible.link_width(cap_width, f"{base}/max_link_width", "width"),
            parse_sysfs_speed(attrs.get("current_link_speed"), f"{base}/current_link_speed"),
            plausible.link_width(sta_width, f"{base}/current_link_width", "width", link_down_ok=True),
        )
    return {
        "bus_id": bus_id,
        "description": None,
        "vendor_id": _sysfs_hex(attrs.get("vendor"), 4),
        "device_id": _sysfs_hex(attrs.get("device"), 4),
        # class is 0xCCSSPP; lspci's class id is the CCSS part.
        "class_id": _sysfs_hex(attrs.get("class"), 4),
        "numa_node": numa if numa is not None and numa >= 0 else None,
        "link": link,
        "upstream": None,
    }


_SYSFS_ATTRS = (
    "vendor",
    "device",
    "class",
    "numa_node",
    "current_link_speed",
    "max_link_speed",
    "current_link_width",
    "max_link_width",
)


def read_sysfs_pci(source: Source) -> dict[str, dict[str, Any]]:
    """sysfs devices by bus id ({} when sys/bus/pci/devices is absent)."""
    devices: dict[str, dict[str, Any]] = {}
    for entry in source.listdir(SYSFS_PCI):
        bus_id = normalize_bus_id(entry)
        if bus_id is None:
            continue
        attrs = {a: source.read(f"{SYSFS_PCI}/{entry}/{a}") for a in _SYSFS_ATTRS}
        devices[bus_id] = parse_sysfs_pci_device(bus_id, attrs)
    return devices


def merge_pci(lspci: list[dict[str, Any]], sysfs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """lspci devices with ids and NUMA node from sysfs; sysfs link only where lspci has none
    (lspci shows no capabilities when not run as root)."""
    merged = []
    for parsed in lspci:
        extra = sysfs.get(parsed["bus_id"])
        device = dict(parsed)
        if extra is not None:
            for key in ("vendor_id", "device_id", "class_id", "numa_node"):
                if extra[key] is not None:
                    device[key] = extra[key]
            if device["link"] is None:
                device["link"] = extra["link"]
        merged.append(device)
    return merged


def downgraded_bus_ids(devices: list[dict[str, Any]]) -> list[str]:
    """Bus ids whose link runs below its capability, in speed or width."""
    return [
        d["bus_id"]
        for d in devices
        if d["link"] is not None and (d["link"]["speed_downgraded"] or d["link"]["width_downgraded"])
    ]


def gather_pci(source: Source) -> dict[str, Any]:
    """`gpurack_pci` for one node.

    Raises:
        FactsError: lspci or sysfs output is malformed.
    """
    out = source.run(LSPCI_ARGV)
    sysfs = read_sysfs_pci(source)
    if out.rc == 0 and out.stdout.strip():
        devices = merge_pci(parse_lspci_vvv(out.stdout), sysfs)
        sources = [_LSPCI] + ([SYSFS_PCI] if sysfs else [])
        return {
            "available": True,
            "source": "lspci-vvv",
            "sources": sources,
            "devices": devices,
            "downgraded": downgraded_bus_ids(devices),
        }
    why = "lspci is not installed" if out.missing else f"lspci -vvv failed (rc={out.rc})"
    if not sysfs:
        return {
            "available": False,
            "reason": f"{why} and {SYSFS_PCI} is empty or absent",
            "source": None,
            "sources": [],
            "devices": [],
            "downgraded": [],
        }
    devices = [sysfs[k] for k in sorted(sysfs)]
    return {
        "available": True,
        "source": "sysfs",
        "sources": [SYSFS_PCI],
        "devices": devices,
        "downgraded": downgraded_bus_ids(devices),
    }
