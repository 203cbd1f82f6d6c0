"""Keeping a finished run in the inventory from `validate` and `run` (a helper, not a verb).

The verdict is printed and written before anything is recorded, and recording can only warn:
a corrupt, locked or unreachable database never hides a verdict or changes the exit code.
"""

from __future__ import annotations

from collections.abc import Callable

from gpurack import render
from gpurack.errors import GpurackError


def record_or_warn(record: Callable[[], object]) -> bool:
    """Call `record`; a GpurackError from it is one warning line on stderr. True when it recorded."""
    try:
        record()
    except GpurackError as exc:
        render.warning(f"not recorded in the inventory: {exc.message}")
        return False
    return True
