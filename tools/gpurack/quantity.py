"""Kubernetes resource quantities ("64", "500m", "512Gi", "1e3") as numbers, and their human form.

Kueue reports quotas and usage as quantities (`resource.Quantity`); `gpurack queue` shows
GPUs as integers, memory in GiB and CPU in cores.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1)}
_DECIMAL |= {"k": Decimal(10**3), "M": Decimal(10**6), "G": Decimal(10**9), "T": Decimal(10**12)}
_DECIMAL |= {"P": Decimal(10**15), "E": Decimal(10**18)}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE]?)$")
_GIB = 2**30
# Resources measured in bytes: shown in GiB.
_BYTE_RESOURCES = ("memory", "ephemeral-storage", "storage")


def parse_quantity(text: object) -> float | None:
    """A quantity string (or number) in base units (cores, bytes, devices); None when unreadable."""
    if isinstance(text, bool) or text is None:
        return None
    if isinstance(text, (int, float)):
        return float(text)
    match = _QUANTITY.match(str(text).strip())
    if match is None:
        return None
    number, suffix = match.groups()
    try:
        value = Decimal(number)
    except InvalidOperation:  # pragma: no cover - the pattern only lets numbers through
        return None
    if suffix in _BINARY:
        return float(value * _BINARY[suffix])
    if suffix[:1] in ("e", "E"):
        return float(value * Decimal(10) ** int(suffix[1:]))
    return float(value * _DECIMAL[suffix])


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
