"""What `gpurack platform render` wrote, and each pool's GPUs against the quotas asked of it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpurack.formatting import plural
from gpurack.render.console import stdout_console
from gpurack.render.text import table


def platform_summary(files: Sequence[tuple[Path, int]], capacity: Sequence[dict[str, Any]]) -> None:
    """A table of pools (GPUs, their source, nominal quota), then one line per file written."""
    out = table("GPU capacity", "pool", "hosts", "GPUs", "source", "nominal quota", "teams")
    for pool in capacity:
        teams = ", ".join(f"{name} {n}" for name, n in pool["teams"].items()) or "-"
        style = "red" if pool["nominal"] > pool["gpus"] else ""
        counts = (str(pool["hosts"]), str(pool["gpus"]), pool["source"], str(pool["nominal"]))
        out.add_row(pool["pool"], *counts, teams, style=style)
    console = stdout_console()
    console.print(out)
    for path, count in files:
        console.print(f"wrote {plural(count, 'object')} to {path}")
