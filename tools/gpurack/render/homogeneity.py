"""`gpurack inventory outliers` as text: per pool, the nodes that differ from most of it, and the splits."""

from __future__ import annotations

import sys

from gpurack.formatting import plural
from gpurack.render.console import stdout_console
from gpurack.render.shapes import HomogeneityShape, PoolHomogeneityShape


def _heading(pool: PoolHomogeneityShape) -> str:
    head = f"pool {pool.pool} ({plural(len(pool.hosts), 'node')})"
    if len(pool.hosts) == 1:
        return f"{head}: one node, nothing to compare"
    if pool.outliers:
        return f"{head}: {plural(len(pool.outliers), 'outlier')}"
    if pool.splits:
        return f"{head}: no outlier, but no majority on {plural(len(pool.splits), 'attribute')}"
    return f"{head}: homogeneous"


def outliers(report: HomogeneityShape) -> None:
    """Each pool's heading, then one line per outlier and per attribute without a majority."""
    console = stdout_console(width=None if sys.stdout.isatty() else 160, soft_wrap=True)
    if not report.pools and not report.unpooled:
        console.print("no nodes recorded yet: `gpurack validate` and `gpurack run` record them")
        return
    for pool in report.pools:
        console.print(_heading(pool))
        for item in [*pool.outliers, *pool.splits]:
            console.print(f"  - {item.sentence}")
    if report.unpooled:
        console.print(f"not compared (recorded without a pool): {', '.join(report.unpooled)}")
