# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""NUMA nodes from sysfs and the CPU summary from `lscpu -J`.

Pure functions only (stdlib); `gather_numa` builds `gpurack_numa` as documented in
docs/facts.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError, excerpt
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.digits import refuse_long_numbers
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import Source
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.view import FactView

LSCPU_ARGV: tuple[str, ...] = ("lscpu", "-J")
SYSFS_NODES = "sys/devices/system/node"

_NODE_DIR = re.compile(r"^node(?P<id>\d+)$")
_MEMTOTAL = re.compile(r"^Node\s+(?P<node>\d+)\s+MemTotal:\s+(?P<kib>\d+)\s+kB\s*$", re.MULTILINE)
_RANGE = re.compile(r"^(?P<lo>\d+)(?:-(?P<hi>\d+))?$")


def count_cpulist(cpulist: str, name: str = "cpulist") -> int:
    """Number of CPUs in a kernel cpulist (`0-15,32-47` -> 32; empty -> 0).

    Raises:
        FactsError: a range is not `N` or `N-M`.
    """
    refuse_long_numbers(cpulist, name)
    total = 0
    for part in cpulist.strip().split(","):
        if not part:
            continue
        match = _RANGE.match(part.strip())
        if match is None:
            raise FactsError(f"{name}: {excerpt(part)} is not a CPU range in {excerpt(cpulist.strip())}")
        lo = int(match.group("lo"))
        hi = int(match.group("hi") or lo)
        if hi < lo:
            raise FactsError(f"{name}: range {excerpt(part)} runs backwards")
        total += hi - lo + 1
    return total


def parse_node_meminfo(text: str, name: str = "meminfo") -> int:
    """MemTotal in KiB from a node's meminfo (`Node 0 MemTotal:  4550408 kB`).

    Raises:
        FactsError: no MemTotal line (truncated file).
    """
    refuse_long_numbers(text, name)
    match = _MEMTOTAL.search(text)
    if match is None:
        raise FactsError(f"{name}: no 'Node N MemTotal: ... kB' line")
    return int(match.group("kib"))


def _flatten_lscpu(entries: list[Any], into: dict[str, str]) -> None:
    # util-linux >= 2.38 nests related fields under "children"; older versions are flat.
    for entry in entries:
        if not isinstance(entry, dict) or "field" not in entry:
            raise FactsError(f"lscpu -J: entry without 'field': {excerpt(entry)}")
        into[str(entry["field"]).rstrip(":").strip()] = str(entry.get("data") or "")
        _flatten_lscpu(entry.get("children") or [], into)


def _int_or_none(value: str | None) -> int | None:
    # lscpu prints "-" for values it cannot know (e.g. Socket(s) on some arm64 boards).
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def parse_lscpu_json(text: str) -> dict[str, Any]:
    """CPU summary from `lscpu -J`: model, sockets, cores_per_socket, threads_per_core, cpus.

    Raises:
        FactsError: not JSON, or no `lscpu` list.
    """
    refuse_long_numbers(text, "lscpu -J")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FactsError(f"lscpu -J: invalid JSON ({exc})") from exc
    except RecursionError as exc:
        raise FactsError("lscpu -J: JSON nested too deeply") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("lscpu"), list):
        raise FactsError("lscpu -J: expected an object with an 'lscpu' list")
    fields: dict[str, str] = {}
    _flatten_lscpu(doc["lscpu"], fields)
    return {
        "model": fields.get("Model name") or None,
        "sockets": _int_or_none(fields.get("Socket(s)")),
        "cores_per_socket": _int_or_none(fields.get("Core(s) per socket")),
        "threads_per_core": _int_or_none(fields.get("Thread(s) per core")),
        "cpus": _int_or_none(fields.get("CPU(s)")),
    }


def read_nodes(source: Source) -> list[dict[str, Any]]:
    """NUMA nodes from sys/devices/system/node, ordered by id.

    Raises:
        FactsError: a cpulist or meminfo file is malformed.
    """
    ids = sorted(int(m.group("id")) for e in source.listdir(SYSFS_NODES) if (m := _NODE_DIR.match(e)))
    nodes = []
    for node_id in ids:
        base = f"{SYSFS_NODES}/node{node_id}"
        cpulist = source.read(f"{base}/cpulist")
        meminfo = source.read(f"{base}/meminfo")
        mem_total = parse_node_meminfo(meminfo, f"{base}/meminfo") if meminfo is not None else None
        nodes.append(
            {
                "id": node_id,
                "cpulist": cpulist.strip() if cpulist is not None else None,
                "cpus": count_cpulist(cpulist, f"{base}/cpulist") if cpulist is not None else None,
                "mem_total_kib": mem_total,
            }
        )
    return nodes


def gather_numa(source: Source) -> dict[str, Any]:
    """`gpurack_numa` for one node.

    Raises:
        FactsError: sysfs or lscpu output is malformed.
    """
    nodes = read_nodes(source)
    out = source.run(LSCPU_ARGV)
    cpu = parse_lscpu_json(out.stdout) if out.rc == 0 else None
    sources = ([SYSFS_NODES] if nodes else []) + (["lscpu -J"] if cpu is not None else [])
    facts: dict[str, Any] = {
        "available": bool(nodes),
        "sources": sources,
        "count": len(nodes) if nodes else None,
        "nodes": nodes,
        "cpu": cpu,
    }
    if not nodes:
        facts["reason"] = f"{SYSFS_NODES} has no node* entries (kernel without NUMA, or not captured)"
    return facts


# ---------------------------------------------------------------------------------------
# views: what the functions above produce, for consumers (checks, measured tiers)


class NumaNodeView(FactView):
    """One `gpurack_numa.nodes[]` entry."""

    FIELDS = frozenset({"id", "cpulist", "cpus", "mem_total_kib"})


class NumaFactsView(FactView):
    """`gpurack_numa` as `gather_numa` returns it."""

    FACT = "gpurack_numa"
    FIELDS = frozenset({"available", "reason", "sources", "count", "nodes", "cpu"})

    def nodes(self) -> list[NumaNodeView]:
        """Every NUMA node."""
        return self.items("nodes", NumaNodeView)
