# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""GPU facts (`gpurack_gpu`, docs/facts.md): pure parsers over nvidia-smi output and sysfs.

Stdlib only. `gather_gpu(source)` is the entry point; the `parse_*` functions take the raw
text of one command and raise `FactsError` naming the command and the problem when the
output is malformed or truncated.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils._errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils._fact_view import FactView
from ansible_collections.gpurack.bootstrap.plugins.module_utils._source import CaptureError, Source

NVIDIA_VENDOR_ID = "0x10de"
# PCI base class 03 (display): 0x0300 VGA controller, 0x0302 3D controller (datacenter GPUs).
GPU_CLASS_PREFIXES = ("0x0300", "0x0302")

CMD_XML = ("nvidia-smi", "-q", "-x")
CMD_TEXT = ("nvidia-smi", "-q")
CMD_TOPO = ("nvidia-smi", "topo", "-m")
CMD_NVLINK = ("nvidia-smi", "nvlink", "-s")
PCI_DEVICES = "sys/bus/pci/devices"

_SRC_XML = "nvidia-smi -q -x"
_SRC_TEXT = "nvidia-smi -q"
_SRC_TOPO = "nvidia-smi topo -m"
_SRC_NVLINK = "nvidia-smi nvlink -s"

# PCIe transfer rate per lane (sysfs `*_link_speed`, GT/s) -> generation.
_GT_S_TO_GEN = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}

# nvidia-smi prints these for "no value"; facts use null instead.
_UNKNOWN = frozenset(
    {"", "N/A", "n/a", "[N/A]", "Not Available", "Unknown", "Unknown Error", "[Unknown Error]"}
)

# Fabric manager states that only exist on NVSwitch systems (HGX, NVL): the GPU has (or is
# getting) a place in the NVLink fabric.
_FABRIC_REGISTERED = frozenset({"Completed", "In Progress"})

# XML tag suffixes whose text (`nvidia-smi -q`) spelling differs; both forms end up the same.
_REASON_ALIASES = {"gpu_idle": "idle", "display_clocks_setting": "display_clock_setting"}

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_TEXT_KV = re.compile(r"^(?P<indent> *)(?P<key>\S.*?)\s+:(?: (?P<value>.*))?$")
_TEXT_GPU = re.compile(r"^GPU (?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$")
_NVLINK_GPU = re.compile(r"^GPU (?P<index>\d+): (?P<name>.*?)(?: \(UUID: (?P<uuid>[^)]*)\))?\s*$")
_NVLINK_LINK = re.compile(r"^\s+Link (?P<link>\d+): (?:(?P<inactive><inactive>)|(?P<speed>[\d.]+) GB/s)\s*$")
_TOPO_NIC_LEGEND = re.compile(r"^\s*(?P<nic>NIC\d+)\s*:\s*(?P<name>\S+)\s*$")
_TOPO_AFFINITY = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_GPU_LABEL = re.compile(r"^GPU\d+$")
_NV_LINK_TYPE = re.compile(r"^NV\d+$")

# One GPU, read from either nvidia-smi format: field -> raw string (None when absent), plus
# the leaves of the ECC error counters and the clocks event reasons.
_Raw = dict[str, Any]


# ---------------------------------------------------------------------------------------
# value helpers


def _known(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return None if value in _UNKNOWN else value


def _to_int(value: str | None, source: str, what: str) -> int | None:
    """'143771 MiB' -> 143771, '16x' -> 16, 'N/A' -> None.

    Raises:
        FactsError: the value is neither a number nor an "unknown" marker.
    """
    value = _known(value)
    if value is None:
        return None
    match = re.match(r"^(-?\d+)\s*(?:x|MiB|KiB|bank\(s\))?$", value)
    if match is None:
        raise FactsError(f"{source}: {what} is {value!r}, expected a number")
    return int(match.group(1))


def _to_bool(value: str | None, source: str, what: str) -> bool | None:
    """Enabled/Yes/Active -> True, Disabled/No/Not Active -> False, N/A -> None."""
    value = _known(value)
    if value is None:
        return None
    if value in ("Enabled", "Yes", "Active"):
        return True
    if value in ("Disabled", "No", "Not Active", "None"):
        return False
    raise FactsError(f"{source}: {what} is {value!r}, expected Enabled/Disabled or Yes/No")


def _snake(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def normalize_bus_id(bus_id: str) -> str:
    """'00000000:19:00.0' (nvidia-smi) -> '0000:19:00.0' (sysfs form, lower case)."""
    bus_id = bus_id.strip().lower()
    domain, _, rest = bus_id.partition(":")
    if rest and len(domain) > 4:
        domain = domain[-4:]
    return f"{domain}:{rest}" if rest else bus_id


def _device_id(pci_device_id: str | None) -> str | None:
    """'0x233510DE' / '233510DE' (device id + vendor id, nvidia-smi) -> '0x2335'."""
    value = _known(pci_device_id)
    if value is None:
        return None
    digits = value.lower().removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]{8}", digits):
        return None
    return f"0x{digits[:4]}"


# ---------------------------------------------------------------------------------------
# shared GPU builder (both nvidia-smi formats)


def _sum_counters(leaves: Iterable[tuple[str, str]], wanted: str, source: str) -> int | None:
    """Total of the counters in `leaves` ((snake path, value)) that are `wanted`.

    Counters come either as one Single Bit / Double Bit `total` (older drivers) or split by
    memory (SRAM/DRAM correctable and uncorrectable, 535 and later); N/A counters are skipped
    and all-N/A gives None.
    """
    leaves = list(leaves)
    older = {"single_bit": "corrected", "double_bit": "uncorrected"}
    picked: list[str] = []
    if any(path.startswith(tuple(older)) for path, _ in leaves):
        picked = [v for p, v in leaves if p.endswith("total") and older.get(p.split("/")[0]) == wanted]
    else:
        for path, value in leaves:
            leaf = path.rsplit("/", 1)[-1]
            if "uncorrectable" in leaf:
                kind = "uncorrected"
            elif "correctable" in leaf:
                kind = "corrected"
            else:
                continue
            if kind == wanted:
                picked.append(value)
    numbers = [_to_int(v, source, f"ECC counter {wanted}") for v in picked]
    known = [n for n in numbers if n is not None]
    return sum(known) if known else None


def _build_gpu(index: int, raw: _Raw, source: str) -> dict[str, Any]:
    """One `gpus[]` entry of the schema from the raw fields of either nvidia-smi format."""
    where = f"{source}: GPU {raw.get('bus_id') or index}"
    if _known(raw.get("name")) is None:
        raise FactsError(f"{where} has no Product Name (truncated or not nvidia-smi -q output?)")
    if _known(raw.get("uuid")) is None:
        raise FactsError(f"{where} has no GPU UUID (truncated output?)")
    if raw.get("memory_total") is None:
        raise FactsError(f"{where} has no FB Memory Usage total (truncated output?)")

    ecc_leaves: dict[str, list[tuple[str, str]]] = raw["ecc_leaves"]
    remapped = raw["remapped"]
    remapped_rows: dict[str, Any] | None = None
    if remapped is not None:
        remapped_rows = {
            "correctable": _to_int(remapped.get("correctable"), where, "remapped rows correctable"),
            "uncorrectable": _to_int(remapped.get("uncorrectable"), where, "remapped rows uncorrectable"),
            "pending": _to_bool(remapped.get("pending"), where, "remapped rows pending"),
            "failure": _to_bool(remapped.get("failure"), where, "remapped rows failure"),
        }
        if all(v is None for v in remapped_rows.values()):
            remapped_rows = None

    reasons: list[tuple[str, str]] = raw["reasons"]
    bus_id = _known(raw.get("bus_id"))
    return {
        "index": index,
        "name": _known(raw["name"]),
        "architecture": _known(raw.get("architecture")),
        "uuid": _known(raw.get("uuid")),
        "serial": _known(raw.get("serial")),
        "bus_id": normalize_bus_id(bus_id) if bus_id else None,
        "pci_device_id": _device_id(raw.get("pci_device_id")),
        "vbios": _known(raw.get("vbios")),
        "memory_total_mib": _to_int(raw.get("memory_total"), where, "FB memory total"),
        "pcie": {
            "gen_current": _to_int(raw.get("gen_current"), where, "current PCIe generation"),
            "gen_max": _to_int(raw.get("gen_max"), where, "max PCIe generation"),
            "width_current": _to_int(raw.get("width_current"), where, "current link width"),
            "width_max": _to_int(raw.get("width_max"), where, "max link width"),
        },
        "pcie_replays": {
            "since_reset": _to_int(raw.get("replays"), where, "PCIe replays since reset"),
            "rollovers": _to_int(raw.get("replay_rollovers"), where, "PCIe replay rollovers"),
        },
        "persistence_mode": _to_bool(raw.get("persistence"), where, "persistence mode"),
        "mig_mode": _to_bool(raw.get("mig"), where, "MIG mode"),
        "ecc_mode": _to_bool(raw.get("ecc"), where, "ECC mode"),
        "ecc_errors": {
            f"{scope}_{kind}": _sum_counters(ecc_leaves.get(scope, []), kind, where)
            for scope in ("volatile", "aggregate")
            for kind in ("corrected", "uncorrected")
        },
        "remapped_rows": remapped_rows,
        "retired_pages": {
            "single_bit": _to_int(raw.get("retired_single"), where, "retired pages single bit"),
            "double_bit": _to_int(raw.get("retired_double"), where, "retired pages double bit"),
            "pending": _to_bool(raw.get("retired_pending"), where, "retired pages pending"),
        },
        "recovery_action": _known(raw.get("recovery_action")),
        "clocks_event_reasons": [name for name, state in reasons if state.strip() == "Active"],
        "nvlinks": [],
        "nvlink_source": None,
        "numa_node": None,
        "cpu_affinity": None,
        "_fabric_state": _known(raw.get("fabric_state")),
    }


def _finish(
    driver: str | None, cuda: str | None, attached: str | None, raws: list[_Raw], source: str
) -> dict[str, Any]:
    count = _to_int(attached, source, "Attached GPUs") if attached is not None else None
    if count is not None and count != len(raws):
        raise FactsError(
            f"{source}: 'Attached GPUs: {count}' but {len(raws)} GPU sections (truncated output?)"
        )
    gpus = [_build_gpu(i, raw, source) for i, raw in enumerate(raws)]
    fabric = [gpu.pop("_fabric_state") for gpu in gpus]
    return {
        "driver_version": _known(driver),
        "cuda_version": _known(cuda),
        "count": len(gpus),
        "gpus": gpus,
        "nvswitch": any(state in _FABRIC_REGISTERED for state in fabric),
    }


# ---------------------------------------------------------------------------------------
# nvidia-smi -q -x

_XML_FIELDS = {
    "name": "product_name",
    "architecture": "product_architecture",
    "uuid": "uuid",
    "serial": "serial",
    "bus_id": "pci/pci_bus_id",
    "pci_device_id": "pci/pci_device_id",
    "vbios": "vbios_version",
    "memory_total": "fb_memory_usage/total",
    "gen_current": "pci/pci_gpu_link_info/pcie_gen/current_link_gen",
    "gen_max": "pci/pci_gpu_link_info/pcie_gen/max_link_gen",
    "width_current": "pci/pci_gpu_link_info/link_widths/current_link_width",
    "width_max": "pci/pci_gpu_link_info/link_widths/max_link_width",
    "replays": "pci/replay_counter",
    "replay_rollovers": "pci/replay_rollover_counter",
    "persistence": "persistence_mode",
    "mig": "mig_mode/current_mig",
    "ecc": "ecc_mode/current_ecc",
    "retired_single": "retired_pages/multiple_single_bit_retirement/retired_count",
    "retired_double": "retired_pages/double_bit_retirement/retired_count",
    "recovery_action": "gpu_recovery_action",
    "fabric_state": "fabric/state",
}
_XML_REMAPPED = {
    "correctable": "remapped_row_corr",
    "uncorrectable": "remapped_row_unc",
    "pending": "remapped_row_pending",
    "failure": "remapped_row_failure",
}


def _xml_leaves(element: ET.Element, prefix: str = "") -> list[tuple[str, str]]:
    leaves: list[tuple[str, str]] = []
    for child in element:
        path = f"{prefix}{child.tag}"
        if len(child):
            leaves.extend(_xml_leaves(child, f"{path}/"))
        else:
            leaves.append((path, (child.text or "").strip()))
    return leaves


def _xml_raw(gpu: ET.Element) -> _Raw:
    raw: _Raw = {field: gpu.findtext(path) for field, path in _XML_FIELDS.items()}
    if raw["bus_id"] is None:
        raw["bus_id"] = gpu.get("id")
    pending = gpu.findtext("retired_pages/pending_blacklist")
    raw["retired_pending"] = pending if _known(pending) else gpu.findtext("retired_pages/pending_retirement")

    remapped = gpu.find("remapped_rows")
    raw["remapped"] = (
        {key: remapped.findtext(tag) for key, tag in _XML_REMAPPED.items()} if remapped is not None else None
    )
    raw["ecc_leaves"] = {
        scope: _xml_leaves(element)
        for scope in ("volatile", "aggregate")
        if (element := gpu.find(f"ecc_errors/{scope}")) is not None
    }
    # Drivers before 530 call them clocks_throttle_reasons.
    reasons = gpu.find("clocks_event_reasons")
    if reasons is None:
        reasons = gpu.find("clocks_throttle_reasons")
    raw["reasons"] = []
    for child in reasons if reasons is not None else []:
        name = re.sub(r"^clocks_(?:event|throttle)_reason_", "", child.tag)
        raw["reasons"].append((_REASON_ALIASES.get(name, name), (child.text or "").strip()))
    return raw


def parse_nvidia_smi_xml(text: str) -> dict[str, Any]:
    """`nvidia-smi -q -x` -> {driver_version, cuda_version, count, gpus, nvswitch}.

    Raises:
        FactsError: the XML does not parse, is not an nvidia_smi_log, or is truncated.
    """
    try:
        root = ET.fromstring(text.strip())
    except ET.ParseError as exc:
        raise FactsError(f"{_SRC_XML}: XML does not parse ({exc})") from exc
    if root.tag != "nvidia_smi_log":
        raise FactsError(f"{_SRC_XML}: root element is <{root.tag}>, expected <nvidia_smi_log>")
    raws = [_xml_raw(gpu) for gpu in root.findall("gpu")]
    return _finish(
        root.findtext("driver_version"),
        root.findtext("cuda_version"),
        root.findtext("attached_gpus"),
        raws,
        _SRC_XML,
    )


# ---------------------------------------------------------------------------------------
# nvidia-smi -q (text)

_TEXT_FIELDS: dict[str, tuple[str, ...]] = {
    "name": ("Product Name",),
    "architecture": ("Product Architecture",),
    "uuid": ("GPU UUID",),
    "serial": ("Serial Number",),
    "bus_id": ("PCI", "Bus Id"),
    "pci_device_id": ("PCI", "Device Id"),
    "vbios": ("VBIOS Version",),
    "memory_total": ("FB Memory Usage", "Total"),
    "gen_current": ("PCI", "GPU Link Info", "PCIe Generation", "Current"),
    "gen_max": ("PCI", "GPU Link Info", "PCIe Generation", "Max"),
    "width_current": ("PCI", "GPU Link Info", "Link Width", "Current"),
    "width_max": ("PCI", "GPU Link Info", "Link Width", "Max"),
    "replays": ("PCI", "Replays Since Reset"),
    "replay_rollovers": ("PCI", "Replay Number Rollovers"),
    "persistence": ("Persistence Mode",),
    "mig": ("MIG Mode", "Current"),
    "ecc": ("ECC Mode", "Current"),
    "retired_single": ("Retired Pages", "Single Bit ECC"),
    "retired_double": ("Retired Pages", "Double Bit ECC"),
    "retired_pending": ("Retired Pages", "Pending Page Blacklist"),
    "recovery_action": ("GPU Recovery Action",),
    "fabric_state": ("Fabric", "State"),
}
_TEXT_REMAPPED = {
    "correctable": "Correctable Error",
    "uncorrectable": "Uncorrectable Error",
    "pending": "Pending",
    "failure": "Remapping Failure Occurred",
}

_Section = dict[tuple[str, ...], str]


def _text_raw(bus: str, section: _Section) -> _Raw:
    raw: _Raw = {field: section.get(path) for field, path in _TEXT_FIELDS.items()}
    if raw["bus_id"] is None:
        raw["bus_id"] = bus
    if raw["retired_pending"] is None:
        raw["retired_pending"] = section.get(("Retired Pages", "Pending"))

    # "Remapped Rows : N/A" (no children) on GPUs without row remapping: _build_gpu -> null.
    raw["remapped"] = {key: section.get(("Remapped Rows", name)) for key, name in _TEXT_REMAPPED.items()}

    raw["ecc_leaves"] = {
        scope: [
            ("/".join(_snake(p) for p in path[2:]), value)
            for path, value in section.items()
            if len(path) > 2 and path[:2] == ("ECC Errors", scope.capitalize())
        ]
        for scope in ("volatile", "aggregate")
    }
    reasons_key = "Clocks Event Reasons"
    if not any(p[0] == reasons_key for p in section):
        reasons_key = "Clocks Throttle Reasons"  # drivers before 530
    raw["reasons"] = [
        (_snake(path[-1]), value)
        for path, value in section.items()
        if len(path) > 1 and path[0] == reasons_key
    ]
    return raw


def parse_nvidia_smi_text(text: str) -> dict[str, Any]:
    """`nvidia-smi -q` (as printed or pasted) -> the same dict as `parse_nvidia_smi_xml`.

    Raises:
        FactsError: a line does not parse, a GPU section lacks its Product Name, or there
            are fewer GPU sections than 'Attached GPUs' says (truncated paste).
    """
    header: dict[str, str] = {}
    sections: list[tuple[str, _Section]] = []
    stack: list[str] = []
    for number, raw_line in enumerate(text.splitlines(), start=1):
        line = raw_line.rstrip()
        if not line.strip() or line.lstrip().startswith("====="):
            continue
        if gpu := _TEXT_GPU.match(line):
            sections.append((gpu.group("bus"), {}))
            stack = []
            continue
        match = _TEXT_KV.match(line)
        indent = len(line) - len(line.lstrip(" "))
        # Section headers ("    PCI") carry no value; their children are indented 4 more.
        key, value = (match.group("key"), match.group("value") or "") if match else (line.strip(), None)
        depth = indent // 4
        if depth == 0:
            if value is None:
                raise FactsError(
                    f"{_SRC_TEXT}: line {number} is neither 'Key : value' nor 'GPU <bus id>': "
                    f"{line.strip()!r} (not nvidia-smi -q output?)"
                )
            if sections:
                raise FactsError(
                    f"{_SRC_TEXT}: line {number} is not indented under its GPU section: {line!r}"
                )
            header[key] = value
            continue
        if not sections:
            raise FactsError(f"{_SRC_TEXT}: line {number} is indented but no 'GPU <bus id>' line came before")
        stack = [*stack[: depth - 1], key]
        if len(stack) != depth:
            raise FactsError(f"{_SRC_TEXT}: line {number} is indented deeper than its section: {line!r}")
        # First wins: repeated keys only occur in the process list, which facts do not use.
        sections[-1][1].setdefault(tuple(stack), value or "")
    if not sections and "Attached GPUs" not in header:
        raise FactsError(
            f"{_SRC_TEXT}: no 'Attached GPUs' line and no GPU sections (not nvidia-smi -q output?)"
        )
    raws = [_text_raw(bus, section) for bus, section in sections]
    return _finish(
        header.get("Driver Version"), header.get("CUDA Version"), header.get("Attached GPUs"), raws, _SRC_TEXT
    )


# ---------------------------------------------------------------------------------------
# nvidia-smi topo -m


def parse_topo_matrix(text: str) -> dict[str, Any]:
    """`nvidia-smi topo -m` -> {gpus, links, nics, nic_names, affinity}.

    `links[a][b]` is the connection type (NV18, PIX, SYS...) for every listed pair except
    the diagonal X; `affinity[GPUn]` is {cpu_affinity, numa_node} (None when N/A).

    Raises:
        FactsError: no header row, a device row is missing, or a row has too few columns.
    """
    lines = [_ANSI.sub("", line).rstrip() for line in text.splitlines()]
    header_at = next(
        (i for i, line in enumerate(lines) if line[:1] in ("\t", " ") and re.search(r"\bGPU\d+\b", line)),
        None,
    )
    if header_at is None:
        raise FactsError(f"{_SRC_TOPO}: no header row with GPU columns (not topo -m output?)")
    columns = [c.strip() for c in lines[header_at].split("\t") if c.strip()]
    devices = [c for c in columns if c not in _TOPO_AFFINITY]
    affinity_columns = [c for c in columns if c in _TOPO_AFFINITY]
    gpus = [d for d in devices if _GPU_LABEL.match(d)]
    nics = [d for d in devices if not _GPU_LABEL.match(d)]

    links: dict[str, dict[str, str]] = {}
    affinity: dict[str, dict[str, Any]] = {}
    nic_names: dict[str, str] = {}
    for line in lines[header_at + 1 :]:
        if legend := _TOPO_NIC_LEGEND.match(line):
            nic_names[legend.group("nic")] = legend.group("name")
            continue
        fields = [f.strip() for f in line.split("\t") if f.strip()]
        if not fields or fields[0] not in devices or fields[0] in links:
            continue
        row, values = fields[0], fields[1:]
        if len(values) < len(devices):
            raise FactsError(
                f"{_SRC_TOPO}: row {row} has {len(values)} columns, expected {len(devices)} (truncated?)"
            )
        links[row] = {dev: kind for dev, kind in zip(devices, values, strict=False) if dev != row}
        if row in gpus:
            extra = dict(zip(affinity_columns, values[len(devices) :], strict=False))
            numa = _known(extra.get("NUMA Affinity"))
            affinity[row] = {
                "cpu_affinity": _known(extra.get("CPU Affinity")),
                "numa_node": int(numa) if numa is not None and numa.isdigit() else None,
            }
    missing = [d for d in devices if d not in links]
    if missing:
        raise FactsError(f"{_SRC_TOPO}: no row for {', '.join(missing)} (truncated output?)")
    return {"gpus": gpus, "links": links, "nics": nics, "nic_names": nic_names, "affinity": affinity}


# ---------------------------------------------------------------------------------------
# nvidia-smi nvlink -s


def parse_nvlink_status(text: str) -> dict[int, list[dict[str, Any]]]:
    """`nvidia-smi nvlink -s` -> {gpu index: [{link, speed_gbps, active}]}; empty text -> {}.

    `speed_gbps` is the per-link rate nvidia-smi prints in GB/s; inactive links have None.

    Raises:
        FactsError: a line is neither a `GPU n:` header nor a `Link n:` line under one.
    """
    result: dict[int, list[dict[str, Any]]] = {}
    current: int | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if gpu := _NVLINK_GPU.match(line):
            current = int(gpu.group("index"))
            result[current] = []
            continue
        link = _NVLINK_LINK.match(line)
        if link is None:
            raise FactsError(f"{_SRC_NVLINK}: line {number} does not parse: {line.strip()!r}")
        if current is None:
            raise FactsError(f"{_SRC_NVLINK}: line {number} lists a link before any 'GPU n:' line")
        active = link.group("inactive") is None
        result[current].append(
            {
                "link": int(link.group("link")),
                "speed_gbps": float(link.group("speed")) if active else None,
                "active": active,
            }
        )
    return result


# ---------------------------------------------------------------------------------------
# PCI scan (no driver)


def pcie_gen(link_speed: str | None) -> int | None:
    """sysfs '32.0 GT/s PCIe' (or older '8 GT/s') -> 5; 'Unknown' or absent -> None."""
    match = re.match(r"^\s*([\d.]+)\s*GT/s", link_speed or "")
    return _GT_S_TO_GEN.get(float(match.group(1))) if match else None


def _sysfs_int(text: str | None) -> int | None:
    value = (text or "").strip()
    return int(value) if re.fullmatch(r"\d+", value) else None


def _numa_node(source: Source, bus_id: str) -> int | None:
    # sysfs says -1 when the platform reports no NUMA locality (VMs, single-socket boards).
    return _sysfs_int(source.read(f"{PCI_DEVICES}/{bus_id}/numa_node"))


def scan_pci_gpus(source: Source) -> list[dict[str, Any]]:
    """NVIDIA display/3D controllers under sys/bus/pci/devices, in bus order, schema-shaped."""
    gpus: list[dict[str, Any]] = []
    for bus_id in source.listdir(PCI_DEVICES):
        base = f"{PCI_DEVICES}/{bus_id}"
        vendor = (source.read(f"{base}/vendor") or "").strip().lower()
        pci_class = (source.read(f"{base}/class") or "").strip().lower()
        if vendor != NVIDIA_VENDOR_ID or not pci_class.startswith(GPU_CLASS_PREFIXES):
            continue
        device = (source.read(f"{base}/device") or "").strip().lower() or None
        gpus.append(
            {
                "index": len(gpus),
                "name": f"NVIDIA {device}" if device else "NVIDIA GPU",
                "architecture": None,
                "uuid": None,
                "serial": None,
                "bus_id": bus_id.lower(),
                "pci_device_id": device,
                "vbios": None,
                "memory_total_mib": None,
                "pcie": {
                    "gen_current": pcie_gen(source.read(f"{base}/current_link_speed")),
                    "gen_max": pcie_gen(source.read(f"{base}/max_link_speed")),
                    "width_current": _sysfs_int(source.read(f"{base}/current_link_width")),
                    "width_max": _sysfs_int(source.read(f"{base}/max_link_width")),
                },
                "pcie_replays": None,
                "persistence_mode": None,
                "mig_mode": None,
                "ecc_mode": None,
                "ecc_errors": None,
                "remapped_rows": None,
                "retired_pages": None,
                "recovery_action": None,
                "clocks_event_reasons": None,
                "nvlinks": None,
                "nvlink_source": None,
                "numa_node": _numa_node(source, bus_id),
                "cpu_affinity": _known(source.read(f"{base}/local_cpulist")),
            }
        )
    return gpus


# ---------------------------------------------------------------------------------------
# gather


def _failure(output_rc: int, text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "no output")
    return f"rc={output_rc}: {first}"


def _run_smi(source: Source) -> tuple[dict[str, Any] | None, str, str]:
    """(parsed, source name, why not) from nvidia-smi -q -x, else nvidia-smi -q."""
    xml = source.run(CMD_XML)
    if xml.rc == 0 and xml.stdout.strip():
        return parse_nvidia_smi_xml(xml.stdout), "nvidia-smi-xml", ""
    # Old drivers and some containers lack -x; operators' pasted captures may hold only text.
    text = source.run(CMD_TEXT)
    if text.rc == 0 and text.stdout.strip():
        return parse_nvidia_smi_text(text.stdout), "nvidia-smi-text", ""
    if xml.missing and text.missing:
        return None, "none", "nvidia-smi not found"
    failed = text if not text.missing else xml
    return None, "none", f"nvidia-smi failed ({_failure(failed.rc, failed.stdout + failed.stderr)})"


def _is_nvswitch_mesh(topology: Mapping[str, Any]) -> bool:
    # Two GPUs on an NVLink bridge also form a "full mesh"; only call it NVSwitch beyond that.
    gpus: list[str] = topology["gpus"]
    links: dict[str, dict[str, str]] = topology["links"]
    return len(gpus) > 2 and all(
        _NV_LINK_TYPE.match(links.get(a, {}).get(b, "")) for a in gpus for b in gpus if a != b
    )


def _add_topology(facts: dict[str, Any], source: Source) -> None:
    facts["topology"] = None
    topo = source.run(CMD_TOPO)
    if topo.rc != 0 or not topo.stdout.strip():
        return
    parsed = parse_topo_matrix(topo.stdout)
    if len(parsed["gpus"]) != facts["count"]:
        raise FactsError(
            f"{_SRC_TOPO}: {len(parsed['gpus'])} GPU rows but nvidia-smi -q lists {facts['count']} GPUs"
        )
    affinity = parsed.pop("affinity")
    for gpu in facts["gpus"]:
        found = affinity.get(f"GPU{gpu['index']}", {})
        gpu["cpu_affinity"] = found.get("cpu_affinity")
        gpu["numa_node"] = found.get("numa_node")
    facts["topology"] = parsed
    facts["sources"].append(_SRC_TOPO)
    facts["nvswitch"] = facts["nvswitch"] or _is_nvswitch_mesh(parsed)


def _add_nvlinks(facts: dict[str, Any], source: Source) -> None:
    nvlink = source.run(CMD_NVLINK)
    if nvlink.rc != 0:
        return
    links = parse_nvlink_status(nvlink.stdout)
    unknown = sorted(set(links) - {gpu["index"] for gpu in facts["gpus"]})
    if unknown:
        raise FactsError(f"{_SRC_NVLINK}: lists GPU {unknown[0]} but nvidia-smi -q has {facts['count']} GPUs")
    for gpu in facts["gpus"]:
        gpu["nvlinks"] = links.get(gpu["index"], [])
        gpu["nvlink_source"] = _SRC_NVLINK
    facts["sources"].append(_SRC_NVLINK)


def _gather(source: Source) -> dict[str, Any]:
    parsed, smi_source, why_not = _run_smi(source)
    if parsed is not None and parsed["count"] > 0:
        facts: dict[str, Any] = {
            "available": True,
            "source": smi_source,
            "driver_loaded": True,
            "sources": [_SRC_XML if smi_source == "nvidia-smi-xml" else _SRC_TEXT],
            **parsed,
        }
        _add_topology(facts, source)
        _add_nvlinks(facts, source)
        for gpu in facts["gpus"]:
            if gpu["numa_node"] is None and gpu["bus_id"]:
                gpu["numa_node"] = _numa_node(source, gpu["bus_id"])
        return facts
    if parsed is not None:
        why_not = "nvidia-smi lists no GPUs"

    empty: dict[str, Any] = {
        "driver_version": None,
        "cuda_version": None,
        "driver_loaded": False,
        "topology": None,
        "nvswitch": None,
    }
    gpus = scan_pci_gpus(source)
    if gpus:
        return {
            "available": True,
            "source": "pci-scan",
            "reason": f"{why_not}; {len(gpus)} NVIDIA GPU(s) found on the PCI bus (driver not loaded?)",
            "sources": [PCI_DEVICES],
            **empty,
            "count": len(gpus),
            "gpus": gpus,
        }
    return {
        "available": False,
        "source": "none",
        "reason": f"{why_not} and no NVIDIA PCI devices in sysfs",
        "sources": [],
        **empty,
        "count": 0,
        "gpus": [],
    }


def gather_gpu(source: Source) -> dict[str, Any]:
    """The `gpurack_gpu` facts of one node (docs/facts.md).

    Raises:
        FactsError: nvidia-smi printed malformed or truncated output, or a capture file is
            broken; the message names the node, the command and the problem.
    """
    try:
        return _gather(source)
    except FactsError as exc:
        raise FactsError(f"{source.description}: {exc}") from exc
    except CaptureError as exc:
        raise FactsError(f"{source.description}: {exc}") from exc


# ---------------------------------------------------------------------------------------
# views: what the functions above produce, for consumers (checks, measured tiers)


class NvLinkView(FactView):
    """One `gpus[].nvlinks[]` entry."""

    FIELDS = frozenset({"link", "speed_gbps", "active"})


class GpuView(FactView):
    """One `gpurack_gpu.gpus[]` entry."""

    FIELDS = frozenset(
        {
            "index",
            "name",
            "architecture",
            "uuid",
            "serial",
            "bus_id",
            "pci_device_id",
            "vbios",
            "memory_total_mib",
            "pcie",
            "pcie.gen_current",
            "pcie.gen_max",
            "pcie.width_current",
            "pcie.width_max",
            "pcie_replays.since_reset",
            "pcie_replays.rollovers",
            "persistence_mode",
            "mig_mode",
            "ecc_mode",
            "ecc_errors",
            "ecc_errors.volatile_corrected",
            "ecc_errors.volatile_uncorrected",
            "ecc_errors.aggregate_corrected",
            "ecc_errors.aggregate_uncorrected",
            "remapped_rows.correctable",
            "remapped_rows.uncorrectable",
            "remapped_rows.pending",
            "remapped_rows.failure",
            "retired_pages.single_bit",
            "retired_pages.double_bit",
            "retired_pages.pending",
            "recovery_action",
            "clocks_event_reasons",
            "nvlinks",
            "nvlink_source",
            "numa_node",
            "cpu_affinity",
        }
    )

    def component(self) -> str:
        """`GPU 3 (0000:19:00.0)`, the component name of every GPU result."""
        bus = self.field("bus_id")
        return f"GPU {self.field('index')} ({bus})" if bus else f"GPU {self.field('index')}"

    def nvlinks(self) -> list[NvLinkView]:
        """The GPU's NVLinks (empty when nvidia-smi nvlink -s gave none)."""
        return self.items("nvlinks", NvLinkView)


class GpuFactsView(FactView):
    """`gpurack_gpu` as `gather_gpu` returns it."""

    FACT = "gpurack_gpu"
    FIELDS = frozenset(
        {
            "available",
            "reason",
            "source",
            "sources",
            "driver_version",
            "cuda_version",
            "driver_loaded",
            "count",
            "gpus",
            "topology",
            "topology.links",
            "nvswitch",
        }
    )

    def gpus(self) -> list[GpuView]:
        """Every GPU entry."""
        return self.items("gpus", GpuView)
