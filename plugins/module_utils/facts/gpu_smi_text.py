# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""nvidia-smi -q as printed (or pasted into a capture): the same GPU facts as the XML gives."""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.digits import refuse_long_numbers
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi import (
    SRC_TEXT,
    Raw,
    finish_gpus,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_values import (
    snake,
)

# ---------------------------------------------------------------------------------------
# nvidia-smi -q (text)

_TEXT_KV = re.compile(r"^(?P<indent> *)(?P<key>\S.*?)\s+:(?: (?P<value>.*))?$")
_TEXT_GPU = re.compile(r"^GPU (?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$")

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
    "gen_max_device": ("PCI", "GPU Link Info", "PCIe Generation", "Device Max"),
    "gen_max_host": ("PCI", "GPU Link Info", "PCIe Generation", "Host Max"),
    "width_current": ("PCI", "GPU Link Info", "Link Width", "Current"),
    "width_max": ("PCI", "GPU Link Info", "Link Width", "Max"),
    "replays": ("PCI", "Replays Since Reset"),
    "replay_rollovers": ("PCI", "Replay Number Rollovers"),
    "persistence": ("Persistence Mode",),
    "mig": ("MIG Mode", "Current"),
    "mig_pending": ("MIG Mode", "Pending"),
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


def _text_raw(bus: str, section: _Section) -> Raw:
    raw: Raw = {field: section.get(path) for field, path in _TEXT_FIELDS.items()}
    if raw["bus_id"] is None:
        raw["bus_id"] = bus
    if raw["retired_pending"] is None:
        raw["retired_pending"] = section.get(("Retired Pages", "Pending"))

    # "Remapped Rows : N/A" (no children) on GPUs without row remapping: _build_gpu -> null.
    raw["remapped"] = {key: section.get(("Remapped Rows", name)) for key, name in _TEXT_REMAPPED.items()}

    raw["ecc_leaves"] = {
        scope: [
            ("/".join(snake(p) for p in path[2:]), value)
            for path, value in section.items()
            if len(path) > 2 and path[:2] == ("ECC Errors", scope.capitalize())
        ]
        for scope in ("volatile", "aggregate")
    }
    reasons_key = "Clocks Event Reasons"
    if not any(p[0] == reasons_key for p in section):
        reasons_key = "Clocks Throttle Reasons"  # drivers before 530
    raw["reasons"] = [
        (snake(path[-1]), value)
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
    refuse_long_numbers(text, SRC_TEXT)
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
                    f"{SRC_TEXT}: line {number} is neither 'Key : value' nor 'GPU <bus id>': "
                    f"{line.strip()!r} (not nvidia-smi -q output?)"
                )
            if sections:
                raise FactsError(f"{SRC_TEXT}: line {number} is not indented under its GPU section: {line!r}")
            header[key] = value
            continue
        if not sections:
            raise FactsError(f"{SRC_TEXT}: line {number} is indented but no 'GPU <bus id>' line came before")
        stack = [*stack[: depth - 1], key]
        if len(stack) != depth:
            raise FactsError(f"{SRC_TEXT}: line {number} is indented deeper than its section: {line!r}")
        # First wins: repeated keys only occur in the process list, which facts do not use.
        sections[-1][1].setdefault(tuple(stack), value or "")
    if not sections and "Attached GPUs" not in header:
        raise FactsError(
            f"{SRC_TEXT}: no 'Attached GPUs' line and no GPU sections (not nvidia-smi -q output?)"
        )
    raws = [_text_raw(bus, section) for bus, section in sections]
    return finish_gpus(
        header.get("Driver Version"), header.get("CUDA Version"), header.get("Attached GPUs"), raws, SRC_TEXT
    )
