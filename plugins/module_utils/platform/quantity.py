# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Kubernetes resource quantities ("500m", "64", "512Gi"): parse, add, and write canonically.

The API server stores a quantity in canonical form ("2048Mi" reads back as "2Gi", "1000m"
as "1"); writing that form ourselves keeps `platform render` equal to what the cluster holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

_QUANTITY = re.compile(
    r"^(?P<sign>[+-])?(?P<num>[0-9]+(\.[0-9]*)?|\.[0-9]+)(?P<suffix>[numkMGTPE]|[KMGTPE]i|[eE][+-]?[0-9]+)?$"
)
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


class QuantityError(ValueError):
    """Not a non-negative Kubernetes quantity."""


@dataclass(frozen=True)
class Quantity:
    """A non-negative quantity and whether it was written with binary suffixes (Ki, Mi, ...)."""

    value: Fraction
    # How it is written, not what it is: 1Gi equals 1073741824.
    binary: bool = field(default=False, compare=False)

    def __add__(self, other: Quantity) -> Quantity:
        # As Kubernetes' Quantity.Add: the sum keeps the left operand's format.
        return Quantity(self.value + other.value, self.binary)

    def __str__(self) -> str:
        return canonical(self)


ZERO = Quantity(Fraction(0))


def _scan(text: str) -> tuple[Fraction, bool] | None:
    """The signed value of quantity text and whether it used a binary suffix; None when unreadable."""
    match = _QUANTITY.match(text.strip())
    if match is None:
        return None
    number = Fraction(match["num"]) * (-1 if match["sign"] == "-" else 1)
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        return number * 2 ** _BINARY[suffix], True
    if suffix in _DECIMAL:
        return number * Fraction(10) ** _DECIMAL[suffix], False
    return number * Fraction(10) ** int(suffix[1:]), False


def parse(raw: object) -> Quantity:
    """A quantity from a string or a non-negative int ("64", "500m", "512Gi", 8).

    Raises:
        QuantityError: anything else, a negative number included.
    """
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise QuantityError(f"{raw!r} is not a quantity (a number or a string such as '64', '500m', '512Gi')")
    text = str(raw).strip()
    scanned = None if text.startswith(("+", "-")) else _scan(text)
    if scanned is None:
        raise QuantityError(
            f"{raw!r} is not a non-negative Kubernetes quantity (such as '64', '500m', '512Gi')"
        )
    return Quantity(*scanned)


def signed(text: str) -> Fraction | None:
    """The value of quantity text as the API reports it (a sign allowed); None when unreadable."""
    scanned = _scan(text)
    return None if scanned is None else scanned[0]


def canonical(quantity: Quantity) -> str:
    """The API server's canonical text for `quantity` (binary suffixes only for whole numbers)."""
    value = quantity.value
    if value == 0:
        return "0"
    if quantity.binary and value.denominator == 1:
        whole = int(value)
        for suffix, shift in sorted(_BINARY.items(), key=lambda kv: -kv[1]):
            if whole % (1 << shift) == 0:
                return f"{whole >> shift}{suffix}"
        return str(whole)
    return _decimal(value)


def _decimal(value: Fraction) -> str:
    """The largest decimal suffix (n..E, steps of 10^3) that leaves a whole number; rounds up below 1n."""
    for suffix, exp in sorted(_DECIMAL.items(), key=lambda kv: -kv[1]):
        scaled = value / Fraction(10) ** exp
        if scaled.denominator == 1:
            return f"{int(scaled)}{suffix}"
    nanos = -(-value.numerator * 10**9 // value.denominator)
    return f"{nanos}n"


def total(quantities: list[Quantity]) -> Quantity:
    """The sum of `quantities` (ZERO for none), in the first one's format."""
    result = quantities[0] if quantities else ZERO
    for q in quantities[1:]:
        result = result + q
    return result
