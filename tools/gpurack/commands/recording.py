"""Keeping a finished run in the inventory from `validate`, `run`, `fabric` and `accept` (a
helper, not a verb): their `--db`/`--no-record` options, and the recording itself.

The verdict is printed and written before anything is recorded, and recording can only warn:
a corrupt, locked or unreachable database never hides a verdict or changes the exit code.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from gpurack import render
from gpurack.errors import GpurackError

DB_HELP = "inventory database (default: $GPURACK_DB, else the SQLite file)"


def add_record_options(parser: argparse.ArgumentParser, kept: str) -> None:
    """`--db URL` and `--no-record` ("do not keep `kept` in the inventory")."""
    parser.add_argument("--db", metavar="URL", help=DB_HELP)
    parser.add_argument("--no-record", action="store_true", help=f"do not keep {kept} in the inventory")


def add_extra_vars(parser: argparse.ArgumentParser, what: str = "") -> None:
    """`-e/--extra-vars`, as ansible-playbook takes them (runner.parse_extravars reads them)."""
    parser.add_argument(
        "-e",
        "--extra-vars",
        action="append",
        default=[],
        metavar="VARS",
        help=f"KEY=VALUE, @FILE (YAML/JSON) or an inline YAML/JSON mapping{what}; repeatable",
    )


def record_or_warn(record: Callable[[], object]) -> bool:
    """Call `record`; a GpurackError from it is one warning line on stderr. True when it recorded."""
    try:
        record()
    except GpurackError as exc:
        render.warning(f"not recorded in the inventory: {exc.message}")
        return False
    return True
