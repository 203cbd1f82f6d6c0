"""Node inventory: record what each run saw on each node, query it, and say what drifted.

The domain API over `gpurack.db`: `open_store(url)` gives a `Store`; the records it takes and
returns (`RunRecord`, `NodeRecord`, `AcceptanceRecord`, `SnapshotView`, ...) are those of
`gpurack.records`, re-exported here.
"""

from __future__ import annotations

from gpurack.inventory.export import CSV_FIELDS
from gpurack.inventory.homogeneity import Homogeneity, Outlier, PoolHomogeneity, Split, homogeneity
from gpurack.inventory.store import ExportFormat, Store, check_database, open_store, snapshot_verdict
from gpurack.records import (
    AcceptanceRecord,
    AcceptanceView,
    Comparison,
    HistoryEntry,
    LinkRecord,
    NodeRecord,
    NodeSummary,
    RunKind,
    RunRecord,
    RunView,
    SnapshotView,
)

__all__ = [
    "CSV_FIELDS",
    "AcceptanceRecord",
    "AcceptanceView",
    "Comparison",
    "ExportFormat",
    "HistoryEntry",
    "Homogeneity",
    "LinkRecord",
    "NodeRecord",
    "NodeSummary",
    "Outlier",
    "PoolHomogeneity",
    "RunKind",
    "RunRecord",
    "RunView",
    "SnapshotView",
    "Split",
    "Store",
    "check_database",
    "homogeneity",
    "open_store",
    "snapshot_verdict",
]
