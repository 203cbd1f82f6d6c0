"""What changed on a host between two snapshots: swapped GPUs, downgraded links, new firmware.

Pure functions over the frozen states of `gpurack.hoststate`: `diff` turns two such states
into `Drift` items, each with one plain sentence for operators; `diff_links` does the same
for where its NICs were seen cabled in two fabric runs.
"""

from __future__ import annotations

from gpurack.drift.hosts import diff
from gpurack.drift.links import SeenLink, diff_links
from gpurack.drift.model import Drift, DriftKind

__all__ = ["Drift", "DriftKind", "SeenLink", "diff", "diff_links"]
