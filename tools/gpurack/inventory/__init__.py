"""Node inventory: record what each run saw on each node, query it, and say what drifted.

The domain API over `gpurack.db`: `open_store(url)` gives a `Store`; the records it takes and
returns (`RunRecord`, `NodeRecord`, `AcceptanceRecord`, `SnapshotView`, ...) are those of
`gpurack.records`, re-exported here.
"""

from __future__ import annotations

from gpurack.db.damage import DamagedRowsError
from gpurack.inventory.export import CSV_FIELDS
from gpurack.inventory.homogeneity import Homogeneity, Outlier, PoolHomogeneity, Split, homogeneity
from gpurack.inventory.store import (
    ExportFormat,
    Store,
    check_database,
    open_store,
    snapshot_verdict,
)
from gpurack.records import (
    PATCH_OUTCOMES,
    AcceptanceRecord,
    AcceptanceView,
    Comparison,
    HistoryEntry,
    LinkRecord,
    NodeRecord,
    NodeSummary,
    PatchOutcome,
    PatchRecord,
    RunKind,
    RunRecord,
    RunView,
    SnapshotView,
    patch_outcome,
)

__all__ = [
    "CSV_FIELDS",
    "PATCH_OUTCOMES",
    "AcceptanceRecord",
    "AcceptanceView",
    "Comparison",
    "DamagedRowsError",
    "ExportFormat",
    "HistoryEntry",
    "Homogeneity",
    "LinkRecord",
    "NodeRecord",
    "NodeSummary",
    "Outlier",
    "PatchOutcome",
    "PatchRecord",
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
    "patch_outcome",
    "snapshot_verdict",
]
