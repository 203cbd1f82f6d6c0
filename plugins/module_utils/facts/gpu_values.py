# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Value helpers shared by the GPU parsers (`_gpu_smi`, `_gpu_topology`, `_gpu_pci_scan`).

Stdlib only: ships to every node with the modules that import it.
"""

from __future__ import annotations

import re

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError

# nvidia-smi prints these for "no value"; facts use null instead.
UNKNOWN = frozenset(
    {"", "N/A", "n/a", "[N/A]", "Not Available", "Unknown", "Unknown Error", "[Unknown Error]"}
)

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def known(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return None if value in UNKNOWN else value


def to_int(value: str | None, source: str, what: str) -> int | None:
    """'143771 MiB' -> 143771, '16x' -> 16, 'N/A' -> None.

    Raises:
        FactsError: the value is neither a number nor an "unknown" marker.
    """
    value = known(value)
    if value is None:
        return None
    match = re.match(r"^(-?\d+)\s*(?:x|MiB|KiB|bank\(s\))?$", value)
    if match is None:
        raise FactsError(f"{source}: {what} is {value!r}, expected a number")
    return int(match.group(1))


def to_bool(value: str | None, source: str, what: str) -> bool | None:
    """Enabled/Yes/Active -> True, Disabled/No/Not Active -> False, N/A -> None."""
    value = known(value)
    if value is None:
        return None
    if value in ("Enabled", "Yes", "Active"):
        return True
    if value in ("Disabled", "No", "Not Active", "None"):
        return False
    raise FactsError(f"{source}: {what} is {value!r}, expected Enabled/Disabled or Yes/No")


def snake(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def normalize_bus_id(bus_id: str) -> str:
    """'00000000:19:00.0' (nvidia-smi) -> '0000:19:00.0' (sysfs form, lower case)."""
    bus_id = bus_id.strip().lower()
    domain, _colon, rest = bus_id.partition(":")
    if rest and len(domain) > 4:
        domain = domain[-4:]
    return f"{domain}:{rest}" if rest else bus_id


def device_id(pci_device_id: str | None) -> str | None:
    """'0x233510DE' / '233510DE' (device id + vendor id, nvidia-smi) -> '0x2335'."""
    value = known(pci_device_id)
    if value is None:
        return None
    digits = value.lower().removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]{8}", digits):
        return None
    return f"0x{digits[:4]}"
