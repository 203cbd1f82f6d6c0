"""Everything the operator sees: rich tables and progress on stdout, one-line errors on stderr.

The only package that imports rich. Domain code hands it plain values or its own frozen
records; the shapes it reads are the Protocols in `gpurack.render.shapes`.
"""

from __future__ import annotations

from gpurack.render.acceptance import acceptance_report
from gpurack.render.conformance import conformance_report
from gpurack.render.console import (
    PROG,
    error,
    internal_error,
    interrupted,
    json_out,
    line,
    progress,
    status,
    warning,
    yaml_out,
)
from gpurack.render.fabric import fabric_report
from gpurack.render.facts import facts_tables
from gpurack.render.homogeneity import outliers
from gpurack.render.inventory import comparison, comparisons, history_table, node_list, snapshot_view
from gpurack.render.queue import queue_status
from gpurack.render.results import results_markdown, results_table, sort_results
from gpurack.render.run import capture_summary, patch_outcomes, run_recap, task_event
from gpurack.render.table import Styled, table
from gpurack.render.verdicts import VERDICT_STYLE, verdict_text

__all__ = [
    "PROG",
    "VERDICT_STYLE",
    "Styled",
    "acceptance_report",
    "capture_summary",
    "comparison",
    "comparisons",
    "conformance_report",
    "error",
    "fabric_report",
    "facts_tables",
    "history_table",
    "internal_error",
    "interrupted",
    "json_out",
    "line",
    "node_list",
    "outliers",
    "patch_outcomes",
    "progress",
    "queue_status",
    "results_markdown",
    "results_table",
    "run_recap",
    "snapshot_view",
    "sort_results",
    "status",
    "table",
    "task_event",
    "verdict_text",
    "warning",
    "yaml_out",
]
