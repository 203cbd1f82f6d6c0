"""`gpurack inventory export`: every node's latest snapshot as nested JSON or one CSV row per node."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from gpurack.records import ExportRow, NodeHead

# A spreadsheet evaluates a cell that starts with one of these as a formula (OWASP, "CSV
# Injection"): `=HYPERLINK(...)` in a recorded kernel string would run when the export is opened.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

CSV_FIELDS = [
    "host",
    "pool",
    "k8s_node_name",
    "first_seen",
    "last_seen",
    "last_run",
    "verdict",
    "kernel",
    "driver",
    "cuda",
    "gpu_count",
    "gpu_model",
    "gpu_serials",
    "gpu_uuids",
    "vbios",
    "nic_guids",
    "nic_firmware",
    "nvme_serials",
]


def export_json(rows: Sequence[ExportRow]) -> str:
    """`{"nodes": [...]}`, each node with its latest snapshot nested (null before any)."""
    return json.dumps({"nodes": [_json_node(row) for row in rows]}, indent=2) + "\n"


def export_csv(rows: Sequence[ExportRow]) -> str:
    """One CSV row per node with CSV_FIELDS; lists of serials are space-separated."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({field: csv_cell(cell) for field, cell in _csv_row(row).items()})
    return buffer.getvalue()


def csv_cell(cell: Any) -> Any:
    """A CSV cell that no spreadsheet runs: text starting like a formula gets a leading `'`.

    This is OWASP's neutralisation; numbers stay numbers (a count is never text that starts
    with `-`), and the quote shows in the cell, so nothing is hidden from the reader.
    """
    if isinstance(cell, str) and cell.startswith(_FORMULA_STARTS):
        return "'" + cell
    return cell


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _head(node: NodeHead) -> dict[str, Any]:
    return {
        "host": node.host,
        "pool": node.pool,
        "k8s_node_name": node.k8s_node_name,
        "first_seen": _iso(node.first_seen),
        "last_seen": _iso(node.last_seen),
    }


def _json_node(row: ExportRow) -> dict[str, Any]:
    out: dict[str, Any] = {**_head(row.node), "latest": None}
    snap = row.latest
    if snap is not None:
        state = snap.state
        out["latest"] = {
            "run_id": snap.run_id,
            "run_kind": snap.run_kind,
            "started": _iso(snap.started),
            "source": snap.source,
            "verdict": snap.verdict,
            "kernel": state.kernel,
            "driver": state.driver,
            "cuda": state.cuda,
            "labels": dict(state.labels),
            "gpus": [asdict(g) for g in state.gpus],
            "nics": [asdict(n) for n in state.nics],
            "disks": [asdict(d) for d in state.disks],
            "checks": [asdict(c) for c in state.checks],
        }
    return out


def _joined(values: Sequence[str | None]) -> str:
    return " ".join(dict.fromkeys(v for v in values if v))


def _csv_row(row: ExportRow) -> dict[str, Any]:
    out = _head(row.node)
    snap = row.latest
    if snap is not None:
        state = snap.state
        out |= {
            "last_run": snap.run_id,
            "verdict": snap.verdict,
            "kernel": state.kernel,
            "driver": state.driver,
            "cuda": state.cuda,
            "gpu_count": len(state.gpus),
            "gpu_model": _joined([g.name for g in state.gpus]),
            "gpu_serials": _joined([g.serial for g in state.gpus]),
            "gpu_uuids": _joined([g.uuid for g in state.gpus]),
            "vbios": _joined([g.vbios for g in state.gpus]),
            "nic_guids": _joined([n.guid for n in state.nics]),
            "nic_firmware": _joined([n.fw for n in state.nics]),
            "nvme_serials": _joined([d.serial for d in state.disks]),
        }
    return out
