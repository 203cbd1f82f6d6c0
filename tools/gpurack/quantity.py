"""Kubernetes resource quantities as numbers for the driver, and their human form.

Kueue reports quotas and usage as quantities (`resource.Quantity`); `gpurack queue` shows
GPUs as integers, memory in GiB and CPU in cores.
"""

from __future__ import annotations

import math

from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import signed

_GIB = 2**30
# Resources measured in bytes: shown in GiB.
_BYTE_RESOURCES = ("memory", "ephemeral-storage", "storage")


def parse_quantity(text: object) -> float | None:
    """A quantity string (or number) in base units (cores, bytes, devices); None when unreadable.

    The grammar is the collection's (`platform.quantity`); this only adds numbers and floats.
    """
    if isinstance(text, bool) or text is None:
        return None
    if isinstance(text, (int, float)):
        return float(text)
    value = signed(str(text))
    return None if value is None else float(value)


def is_bytes(resource: str) -> bool:
    """Whether `resource` is counted in bytes (memory, storage, hugepages)."""
    return resource in _BYTE_RESOURCES or resource.startswith(("hugepages-", "requests.memory"))


def _number(value: float, digits: int) -> str:
    if not math.isfinite(value):
        return str(value)
    if value == int(value):
        return str(int(value))
    return f"{value:.{digits}f}".rstrip("0").rstrip(".")


def human(resource: str, value: float | None) -> str:
    """The human form of `value` of `resource`: `8` GPUs, `512 GiB`, `0.5` CPU; `-` when unknown."""
    if value is None:
        return "-"
    if is_bytes(resource):
        return f"{_number(value / _GIB, 1)} GiB"
    if resource == "cpu":
        return _number(value, 3)
    # GPUs, MIG profiles and other extended resources are whole devices.
    return _number(value, 2)
