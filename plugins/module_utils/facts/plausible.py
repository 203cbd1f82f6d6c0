# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What hardware can report: a reading outside these bounds is impossible, not a finding.

The one rule of every parser (docs/facts.md, "Impossible values"): a value no hardware can
report (a PCIe Gen9 link, an x3 link, a current generation above the link's maximum, a
negative counter, 10^23 MiB of GPU memory) raises `FactsError` naming the source, the field
and the value. The parser never passes it on, so no check judges it and no record stores it.
Stdlib only.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError

# PCIe 1.0 to 6.0: generation -> transfer rate per lane, GT/s.
PCIE_GEN_GTS: dict[int, float] = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
LINK_WIDTHS: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
# 16 TiB: far above any GPU (B300: 288 GB), far below what overflows a 64-bit column.
MAX_MEMORY_MIB = 16 * 1024 * 1024
# Hardware counters are at most 64 bits; the inventory DB stores signed 64-bit integers.
MAX_COUNTER = 2**63 - 1


def _impossible(source: str, what: str, value: object, allowed: str) -> FactsError:
    return FactsError(f"{source}: {what} is {value!r}, which no hardware reports ({allowed})")


def pcie_gen(value: int | None, source: str, what: str) -> int | None:
    """A PCIe generation (1-6), None when unknown.

    Raises:
        FactsError: the generation is outside 1-6.
    """
    if value is not None and value not in PCIE_GEN_GTS:
        raise _impossible(source, what, value, "PCIe generations are 1 to 6")
    return value


def link_speed(value: float | None, source: str, what: str) -> float | None:
    """A PCIe transfer rate per lane in GT/s (2.5 ... 64), None when unknown.

    Raises:
        FactsError: the rate is not one a PCIe generation defines.
    """
    if value is not None and value not in PCIE_GEN_GTS.values():
        rates = ", ".join(f"{r:g}" for r in PCIE_GEN_GTS.values())
        raise _impossible(source, what, value, f"PCIe rates are {rates} GT/s")
    return value


def link_width(value: int | None, source: str, what: str, *, link_down_ok: bool = False) -> int | None:
    """A PCIe link width in lanes, None when unknown; 0 only where `link_down_ok` (a link
    that did not train, as lspci and sysfs show on empty root ports).

    Raises:
        FactsError: the width is not x1, x2, x4, x8, x16 or x32 (or 0 where allowed).
    """
    if value is None or value in LINK_WIDTHS or (link_down_ok and value == 0):
        return value
    widths = "/".join(f"x{w}" for w in LINK_WIDTHS) + (", or x0 when down" if link_down_ok else "")
    raise _impossible(source, what, value, f"PCIe links are {widths}")


def not_above(current: int | None, maximum: int | None, source: str, what: str) -> None:
    """Refuse a current link value above the link's maximum (`what` names both).

    Raises:
        FactsError: both are known and current > maximum.
    """
    if current is not None and maximum is not None and current > maximum:
        raise FactsError(f"{source}: {what} is {current}, above its maximum {maximum}, which no link does")


def memory_mib(value: int | None, source: str, what: str) -> int | None:
    """A memory size in MiB (0 to 16 TiB), None when unknown.

    Raises:
        FactsError: the size is negative or above 16 TiB.
    """
    if value is not None and not 0 <= value <= MAX_MEMORY_MIB:
        raise _impossible(source, what, value, f"expected 0 to {MAX_MEMORY_MIB} MiB")
    return value


def counter(value: int | None, source: str, what: str) -> int | None:
    """A count or hardware counter (0 to 2^63-1), None when unknown.

    Raises:
        FactsError: the count is negative or above 2^63-1.
    """
    if value is not None and not 0 <= value <= MAX_COUNTER:
        raise _impossible(source, what, value, "counts are 0 to 2^63-1")
    return value
