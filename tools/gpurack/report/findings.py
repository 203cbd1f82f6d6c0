"""Repeated results as one finding: "GPUs 0-7: clocks held down by hw_slowdown" instead of 8 rows.

Results group when they share the check id, the verdict, the reason once the component's own
name is taken off its front, and the measured and expected values (one row shows one of each).
A finding names its components compactly (`where`): GPU index ranges, PCI addresses, RDMA
ports by device (ranges with an en dash). Findings keep the order of the first result of each.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import Verdict

from gpurack import formatting
from gpurack.report.catalogue import check_info

_GPU = re.compile(r"GPU (\d+)(?: \([^)]*\))?")
_PCI = re.compile(r"PCI (\S+)")
_PORT = re.compile(r"(\S+?)(\d+) port (\d+)")


def group(checks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The checks (report entries, already in display order) grouped into findings."""
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for check in checks:
        groups.setdefault(_key(check), []).append(check)
    return [finding(members) for members in groups.values()]


def is_problem(check: Mapping[str, Any]) -> bool:
    """A warn or fail: the verdicts that carry a remedy, and whose evidence report.md lists."""
    return Verdict.parse(check["verdict"]) in (Verdict.WARN, Verdict.FAIL)


def _key(check: Mapping[str, Any]) -> tuple[Any, ...]:
    shared = shared_reason(check)
    return (
        check["id"],
        check["verdict"],
        check["reason"] if shared is None else ("", shared),
        json.dumps(check["measured"], sort_keys=True, default=str),
        json.dumps(check["expected"], sort_keys=True, default=str),
        check["unit"],
        check["percent"],
    )


def shared_reason(check: Mapping[str, Any]) -> str | None:
    """The reason without its leading component name (`GPU 3 (…): `), None when it has none."""
    reason, component = check["reason"], check["component"]
    if not reason or not component or not reason.startswith(component):
        return None
    rest = reason[len(component) :]
    if rest and rest[0] not in " :":
        return None  # "GPU 1" is not the prefix of "GPU 10 ..."
    return _unwrap(rest.lstrip(": ")) or None


def _unwrap(text: str) -> str:
    """`(PCI bridge: …) links at …` -> `PCI bridge: …: links at …` (a leading aside is the subject)."""
    if not text.startswith("("):
        return text
    depth = 0
    for at, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            rest = text[at + 1 :].strip()
            return f"{text[1:at]}: {rest}" if rest else text[1:at]
    return text


def finding(members: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One finding from results that group (the first one speaks for the shared fields)."""
    first = members[0]
    components = [str(m["component"] or "node") for m in members]
    info = check_info(first["id"])
    remediation = first["remediation"]
    if remediation is None and info is not None and is_problem(first):
        remediation = info.remediation
    return {
        "id": first["id"],
        "title": first["title"] or (info.title if info is not None else None),
        "tier": first["tier"],
        "verdict": first["verdict"],
        "where": where(components),
        "components": components,
        "measured": first["measured"],
        "expected": first["expected"],
        "unit": first["unit"],
        "percent": first["percent"],
        "thresholds": first["thresholds"],
        "reason": first["reason"] if len(members) == 1 else shared_reason(first) or first["reason"],
        "remediation": remediation,
        "limit_source": first["limit_source"],
        "evidence": _evidence(members),
    }


def _evidence(members: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The members' evidence, identical blocks once, each naming the components it is from."""
    blocks: dict[tuple[Any, ...], list[str]] = {}
    for member in members:
        evidence = member["evidence"]
        key = (evidence["source"], tuple(evidence["lines"]))
        blocks.setdefault(key, []).append(str(member["component"] or "node"))
    return [
        {"where": where(comps), "components": comps, "source": source, "lines": list(lines)}
        for (source, lines), comps in blocks.items()
    ]


def where(components: Sequence[str]) -> str:
    """Components named compactly: `GPUs 0-7`, `PCI 0000:17:00.0, 0000:39:00.0`, `port 1 on mlx5_0-3`."""
    unique = list(dict.fromkeys(components))
    if len(unique) == 1:
        return unique[0]
    gpus, pci, ports, other = _partition(unique)
    parts = []
    if gpus:
        parts.append(f"GPU {gpus[0]}" if len(gpus) == 1 else f"GPUs {formatting.ranges(gpus)}")
    if pci:
        parts.append("PCI " + ", ".join(pci))
    parts.extend(_ports(ports))
    parts.extend(other)
    return "; ".join(parts)


def _partition(
    components: Iterable[str],
) -> tuple[list[int], list[str], list[tuple[str, int, str]], list[str]]:
    gpus: list[int] = []
    pci: list[str] = []
    ports: list[tuple[str, int, str]] = []
    other: list[str] = []
    for name in components:
        if m := _GPU.fullmatch(name):
            gpus.append(int(m.group(1)))
        elif m := _PCI.fullmatch(name):
            pci.append(m.group(1))
        elif m := _PORT.fullmatch(name):
            ports.append((m.group(1), int(m.group(2)), m.group(3)))
        else:
            other.append(name)
    return gpus, pci, ports, other


def _ports(ports: Sequence[tuple[str, int, str]]) -> list[str]:
    """`port 1 on mlx5_0, mlx5_1, mlx5_4-9, mlx5_bond_0`: one part per port number."""
    by_port: dict[str, dict[str, list[int]]] = {}
    for stem, number, port in ports:
        by_port.setdefault(port, {}).setdefault(stem, []).append(number)
    parts = []
    for port, stems in by_port.items():
        devices = ", ".join(formatting.ranges(numbers, prefix=stem) for stem, numbers in stems.items())
        parts.append(f"port {port} on {devices}")
    return parts
