"""Human forms of values for people: reports now, the terminal later (plain text, no rich, no HTML).

Check results carry JSON values (`{"speed_gts": 5.0, "width": 1}`, `["hw_slowdown"]`, 143771
with unit MiB); these functions turn them into what an operator reads ("5 GT/s x1",
"hw_slowdown", "143,771 MiB (140.4 GiB)"). Missing values read "—", booleans yes/no.
Escaping for a document format is the writer's job, not this module's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

MISSING = "—"
RANGE_DASH = "\N{EN DASH}"
# Units whose numbers read better bare ("3", not "3 count") or with their usual symbol.
_UNIT_TEXT = {"count": "", "C": "°C"}
# Key suffixes that carry a unit: {"speed_gts": 16} reads "speed 16 GT/s".
_KEY_UNITS = (("_gts", "GT/s"), ("_gbps", "Gb/s"), ("_mib", "MiB"), ("_pct", "%"), ("_s", "s"))
_MIB_PER_GIB = 1024
_SECONDS_PER_MINUTE = 60
_SECONDS_PER_HOUR = 3600


def value(item: Any, unit: str | None = None) -> str:
    """The human form of a result's measured or expected value, with its unit."""
    if item is None or item == "":
        return MISSING
    if isinstance(item, bool):
        return yes_no(item)
    if isinstance(item, (int, float)):
        return quantity(item, unit)
    if isinstance(item, Mapping):
        return mapping(item, unit)
    if isinstance(item, (list, tuple)):
        return ", ".join(value(x, unit) for x in item) or "none"
    return str(item)


def yes_no(flag: bool | None) -> str:
    """yes, no, or — for unknown."""
    return MISSING if flag is None else ("yes" if flag else "no")


def text(item: Any) -> str:
    """A plain field (host, driver, bus id): as is, — when missing."""
    return MISSING if item is None or item == "" else str(item)


def number(x: float) -> str:
    """At most 4 significant digits (no exponent), trailing zeros dropped; 10,000 and up grouped."""
    if isinstance(x, bool) or not math.isfinite(x):
        return str(x)
    magnitude = math.floor(math.log10(abs(x))) if x else 0
    decimals = min(4, max(0, 3 - magnitude))
    rounded = round(float(x), decimals)
    grouping = "," if abs(rounded) >= 10_000 else ""
    body = f"{rounded:{grouping}.{decimals}f}"
    if "." in body:
        body = body.rstrip("0").rstrip(".")
    return "0" if body in ("-0", "") else body


def quantity(x: float, unit: str | None = None) -> str:
    """A number with its unit: MiB also in GiB, seconds as minutes and hours, percent without a space."""
    shown = _UNIT_TEXT.get(unit, unit) if unit else ""
    if shown == "MiB":
        return mib(x)
    if shown == "s":
        return duration(x)
    if shown == "%":
        return percent(x)
    body = number(x)
    if shown == "°C":
        return f"{body} °C"
    return f"{body} {shown}" if shown else body


def mib(x: float | None) -> str:
    """`143,771 MiB (140.4 GiB)`; small sizes in MiB only."""
    if x is None:
        return MISSING
    if abs(x) < _MIB_PER_GIB:
        return f"{number(x)} MiB"
    return f"{number(x)} MiB ({number(round(x / _MIB_PER_GIB, 1))} GiB)"


def percent(x: float | None) -> str:
    """`87.9%`: one decimal at most."""
    return MISSING if x is None else f"{number(round(x, 1))}%"


def duration(seconds: float | None) -> str:
    """`42.5 s`, `12 min 5 s`, `2 h 3 min`."""
    if seconds is None:
        return MISSING
    if seconds < _SECONDS_PER_MINUTE:
        return f"{number(seconds)} s"
    whole = round(seconds)
    if whole < _SECONDS_PER_HOUR:
        return f"{whole // _SECONDS_PER_MINUTE} min {whole % _SECONDS_PER_MINUTE} s"
    return f"{whole // _SECONDS_PER_HOUR} h {whole % _SECONDS_PER_HOUR // _SECONDS_PER_MINUTE} min"


def change(before: Any, after: Any) -> str:
    """`6.1.0-41 → 6.1.0-42`; one value when it stayed the same; — for a side not known."""
    was, now = text(before), text(after)
    return was if was == now else f"{was} \N{RIGHTWARDS ARROW} {now}"


def timestamp(iso: str | None) -> str:
    """An ISO 8601 time as `2026-11-30 09:00:00 UTC` (or its own offset); — when missing."""
    if not iso:
        return MISSING
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    offset = moment.utcoffset()
    zone = "" if offset is None else (" UTC" if not offset else moment.strftime(" UTC%z"))
    return moment.strftime("%Y-%m-%d %H:%M:%S") + zone


def pcie_link(gen: Any, width: Any) -> str:
    """`Gen5 x16`; — when neither is known."""
    if gen is None and width is None:
        return MISSING
    return f"Gen{'?' if gen is None else gen} x{'?' if width is None else width}"


def pcie_now_max(pcie: Mapping[str, Any]) -> str:
    """A GPU's link now, with its maximum when it runs below it: `Gen5 x8 (max Gen5 x16)`."""
    now = pcie_link(pcie.get("gen_current"), pcie.get("width_current"))
    top = pcie_link(pcie.get("gen_max"), pcie.get("width_max"))
    return now if top in (now, MISSING) else f"{now} (max {top})"


def mapping(item: Mapping[str, Any], unit: str | None = None) -> str:
    """A measured object: PCIe links as `5 GT/s x1` / `Gen5 x16`, others as `key value, ...`."""
    keys = set(item)
    if "speed_gts" in keys and keys <= {"speed_gts", "width"}:
        speed = item["speed_gts"]
        width = item.get("width")
        return f"{value(speed, 'GT/s')}" + ("" if width is None else f" x{width}")
    if "gen" in keys and keys <= {"gen", "width"}:
        return pcie_link(item.get("gen"), item.get("width"))
    parts = [_pair(str(key), entry, unit) for key, entry in item.items()]
    return ", ".join(parts) or "none"


def _pair(key: str, entry: Any, unit: str | None) -> str:
    for suffix, key_unit in _KEY_UNITS:
        if key.endswith(suffix) and len(key) > len(suffix):
            return f"{key[: -len(suffix)].replace('_', ' ')} {value(entry, key_unit)}"
    return f"{key.replace('_', ' ')} {value(entry, unit)}"


def runs(numbers: Iterable[int]) -> list[tuple[int, int]]:
    """Consecutive runs of the distinct numbers, ascending: [0, 1, 2, 5] -> [(0, 2), (5, 5)]."""
    out: list[tuple[int, int]] = []
    for n in sorted(set(numbers)):
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def ranges(numbers: Iterable[int], prefix: str = "") -> str:
    """`0-7`, `0, 1, 4-6` (with RANGE_DASH): runs of three or more as a range, each after `prefix`."""
    return ", ".join(_run_parts(runs(numbers), prefix))


def _run_parts(spans: Sequence[tuple[int, int]], prefix: str) -> list[str]:
    parts: list[str] = []
    for first, last in spans:
        if last - first >= 2:
            parts.append(f"{prefix}{first}{RANGE_DASH}{last}")
        else:
            parts.extend(f"{prefix}{n}" for n in range(first, last + 1))
    return parts


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 node`, `2 nodes`."""
    return f"{count} {word if count == 1 else (many or word + 's')}"
