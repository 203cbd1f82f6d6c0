"""The report document: one stored run as a dict following gpurack/data/report.schema.json.

Verdicts follow the one rule of `_results`: a node's verdict is `node_verdict` of its results
(null, "unchecked", when none were recorded), the run's is `run_verdict` of its nodes'. Nodes
and checks are listed most significant verdict first, in `_results.VERDICT_ORDER`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import (
    VERDICT_ORDER,
    VERDICTS,
    Verdict,
    node_verdict,
    rank,
    run_verdict,
)

from gpurack import __version__
from gpurack.hoststate import GpuState
from gpurack.inventory import AcceptanceView, PatchRecord, RunView, SnapshotView, homogeneity
from gpurack.report.catalogue import check_info
from gpurack.report.findings import group

SCHEMA_VERSION = 2
SCHEMA_ID = "urn:gpurack:schema:report:2"
# A patch run's nodes, most in need of a look first: kept out, refused, not readable, then done.
PATCH_ORDER: tuple[str | None, ...] = ("held", "refused", None, "patched", "unchanged")


def verdict_rank(verdict: str | None) -> int:
    """Sort key of a node or check verdict; a node without results sorts after every verdict."""
    return len(VERDICT_ORDER) if verdict is None else rank(verdict)


def build(view: RunView) -> dict[str, Any]:
    """The report of one run as a dict following report.schema.json."""
    nodes = sorted((node_entry(n) for n in view.nodes), key=lambda n: (verdict_rank(n["verdict"]), n["host"]))
    acceptance = None if view.acceptance is None else acceptance_entry(view.acceptance)
    counts = summary(nodes)
    if acceptance is not None:  # an accept run has rows, not nodes: its verdict is theirs
        counts["verdict"] = acceptance["verdict"]
    results = [check_entry(r) for r in view.results] or None
    if results:  # a conformance run's results are about the cluster: its verdict is theirs
        counts["verdict"] = node_verdict(view.results).value
    return {
        "schema_version": SCHEMA_VERSION,
        "generator": f"gpurack {__version__}",
        "run": {
            "id": view.run_id,
            "kind": view.kind,
            "source": view.source,
            "playbook": view.playbook,
            "status": view.status,
            "started": view.started.isoformat(),
            "finished": None if view.finished is None else view.finished.isoformat(),
        },
        "summary": counts,
        "nodes": nodes,
        "homogeneity": homogeneity_entry(view.nodes),
        "acceptance": acceptance,
        "patch": patch_entry(view.patches),
        "results": results,
    }


def acceptance_entry(view: AcceptanceView) -> dict[str, Any]:
    """An accept run's job, what it delivered and cost, and its rows (as checks, in step order)."""
    r = view.record
    return {
        "name": r.name,
        # the inference test's rows are infer.*: its queue is a service, its units requests
        "test": "inference"
        if any(str(row.get("id", "")).startswith("infer.") for row in r.results)
        else "training",
        "team": r.team,
        "queue": r.queue,
        "pool": r.pool,
        "pods": r.pods,
        "gpus": r.gpus,
        "started": r.started.isoformat(),
        "finished": r.finished.isoformat(),
        "outcome": r.outcome,
        "verdict": Verdict.parse(r.verdict).value,
        "accepted_units": r.units,
        "queue_wait_s": r.queue_wait_s,
        "cost_total": r.cost_total,
        "cost_per_unit": r.cost_per_unit,
        "currency": r.currency,
        "rows": [check_entry(row) for row in r.results],
    }


def patch_entry(patches: Sequence[PatchRecord]) -> dict[str, Any] | None:
    """What a patch run did to each node, and the nodes per outcome; None for a run without any."""
    if not patches:
        return None
    nodes = sorted(patches, key=lambda p: (PATCH_ORDER.index(p.outcome), p.host))
    totals = {"nodes": len(nodes), **{str(o or "unknown"): 0 for o in PATCH_ORDER}}
    for patch in nodes:
        totals[patch.outcome or "unknown"] += 1
    return {"totals": totals, "nodes": [_patch_node(p) for p in nodes]}


def _patch_node(p: PatchRecord) -> dict[str, Any]:
    return {
        "host": p.host,
        "node": p.node,
        "outcome": p.outcome,
        "reason": p.reason,
        "drain_s": p.drain_s,
        "update_s": p.update_s,
        "reboot_s": p.reboot_s,
        "validation_s": p.validation_s,
        "kernel_before": p.kernel_before,
        "kernel_after": p.kernel_after,
        "driver_before": p.driver_before,
        "driver_after": p.driver_after,
        "rebooted": p.rebooted,
        "validation": p.validation,
        "maintenance_run": p.maintenance_run,
    }


def homogeneity_entry(views: Sequence[SnapshotView]) -> dict[str, Any]:
    """The run's nodes that differ from most of their pool, and the pools without a majority."""
    found = homogeneity(views)
    return {
        "outliers": [asdict(o) for o in found.outliers],
        "splits": [
            {
                "pool": s.pool,
                "attribute": s.attribute,
                "values": [{"value": value, "hosts": list(hosts)} for value, hosts in s.values],
                "sentence": s.sentence,
            }
            for s in found.splits
        ],
    }


def summary(nodes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Nodes counted by verdict, and the run's verdict over them (an unchecked node counts as skip)."""
    counts: dict[str, Any] = {"nodes": len(nodes), **dict.fromkeys(VERDICTS, 0), "unchecked": 0}
    for node in nodes:
        counts[node["verdict"] or "unchecked"] += 1
    counts["verdict"] = run_verdict(n["verdict"] or Verdict.SKIP for n in nodes).value
    return counts


def node_entry(view: SnapshotView) -> dict[str, Any]:
    """One node: header facts, its checks as recorded, and the same checks grouped as findings."""
    checks = sorted((check_entry(r) for r in view.results), key=lambda c: rank(c["verdict"]))
    counts = dict.fromkeys(VERDICTS, 0)
    for check in checks:
        counts[check["verdict"]] += 1
    return {
        "host": view.host,
        "pool": view.pool,
        "k8s_node_name": view.k8s_node_name,
        "source": view.source,
        "verdict": node_verdict(view.results).value if view.results else None,
        "labels": {str(k): str(v) for k, v in sorted(view.labels.items())},
        "software": {"kernel": view.state.kernel, "driver": view.state.driver, "cuda": view.state.cuda},
        "gpus": [gpu_entry(g) for g in view.state.gpus],
        "counts": counts,
        "checks": checks,
        "findings": group(checks),
    }


def gpu_entry(gpu: GpuState) -> dict[str, Any]:
    """One GPU of the node header."""
    return {
        "index": gpu.index,
        "bus_id": gpu.bus_id,
        "name": gpu.name,
        "serial": gpu.serial,
        "uuid": gpu.uuid,
        "vbios": gpu.vbios,
        "memory_mib": gpu.memory_mib,
        "pcie": {
            "gen_current": gpu.pcie_gen_current,
            "gen_max": gpu.pcie_gen_max,
            "width_current": gpu.pcie_width_current,
            "width_max": gpu.pcie_width_max,
        },
    }


def check_entry(result: Mapping[str, Any]) -> dict[str, Any]:
    """One stored result as recorded, plus its share of the limit and the catalogue's thresholds."""
    check_id = str(result.get("id"))
    raw = result.get("evidence")
    evidence: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    raw_lines = evidence.get("lines")
    lines: list[Any] = raw_lines if isinstance(raw_lines, list) else []
    share = _percent(result)
    return {
        "id": check_id,
        "title": _opt(result.get("title")),
        "tier": _opt(result.get("tier")),
        "component": _opt(result.get("component")),
        "verdict": Verdict.parse(result.get("verdict")).value,
        "measured": result.get("measured"),
        "expected": result.get("expected"),
        "unit": _opt(result.get("unit")),
        "percent": share,
        "thresholds": _thresholds(check_id) if share is not None else None,
        "reason": _opt(result.get("reason")),
        "remediation": _opt(result.get("remediation")),
        "limit_source": _opt(result.get("limit_source")),
        "evidence": {"source": _opt(evidence.get("source")), "lines": [str(line) for line in lines]},
    }


def _number(item: Any) -> float | None:
    return float(item) if isinstance(item, (int, float)) and not isinstance(item, bool) else None


def _percent(result: Mapping[str, Any]) -> float | None:
    """The stored share of the limit; for runs recorded before it was stored, measured / limit."""
    stored = _number(result.get("percent"))
    if stored is not None:
        return round(stored, 1)
    info = check_info(str(result.get("id")))
    measured, expected = _number(result.get("measured")), _number(result.get("expected"))
    # Only checks whose `expected` is the model limit itself (not a pass ratio) can be derived.
    if info is None or not info.model_limit or measured is None or not expected or expected <= 0:
        return None
    return round(100 * measured / expected, 1)


def _thresholds(check_id: str) -> dict[str, float] | None:
    info = check_info(check_id)
    if info is None or info.pass_ratio is None or info.warn_ratio is None:
        return None
    return {"pass": round(100 * info.pass_ratio, 1), "warn": round(100 * info.warn_ratio, 1)}


def _opt(item: Any) -> str | None:
    return None if item is None or item == "" else str(item)
