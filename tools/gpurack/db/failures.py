"""Database failures as the operator sees them: one line, exit 2, after a bounded wait on a busy database.

Every statement gpurack sends runs inside `translated()`, so a locked, corrupt or vanished
database, or a value it cannot hold, is a NotAssessedError and never a traceback.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager

from alembic.util import CommandError
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from gpurack.errors import NotAssessedError, UsageError

WAIT_ENV = "GPURACK_DB_TIMEOUT"
DEFAULT_WAIT_S = 30.0
# PostgreSQL: lock_timeout ran out, statement cancelled; deadlock and serialization failures retry.
_BUSY_STATES = frozenset({"55P03", "57014"})
RETRY_STATES = frozenset({"40P01", "40001"})
# SQLite's words for a lock it waited busy_timeout on.
_BUSY_WORDS = ("database is locked", "database table is locked", "database schema is locked")
_MAX_DETAIL = 200


def wait_seconds() -> float:
    """How long to wait for a busy database: `$GPURACK_DB_TIMEOUT` seconds, else 30.

    Raises:
        UsageError: (64) the variable is not a number of seconds.
    """
    raw = os.environ.get(WAIT_ENV, "").strip()
    if not raw:
        return DEFAULT_WAIT_S
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not math.isfinite(seconds) or seconds < 0 or seconds > 86400:
        raise UsageError(
            f"{WAIT_ENV}={raw[:40]!r}: give the seconds to wait for a busy database (0 to 86400)"
        )
    return seconds


def sqlstate(exc: DBAPIError) -> str | None:
    """The SQLSTATE of a PostgreSQL error (None for SQLite)."""
    state = getattr(exc.orig, "sqlstate", None)
    return state if isinstance(state, str) else None


def is_busy(exc: DBAPIError) -> bool:
    """Whether `exc` says the database stayed locked by someone else for the whole wait."""
    text = str(exc.orig).lower()
    return sqlstate(exc) in _BUSY_STATES or any(words in text for words in _BUSY_WORDS)


def detail(exc: BaseException) -> str:
    """The first line of what the driver said, cut to a readable length."""
    orig = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    lines = str(orig).strip().splitlines()
    first = lines[0].strip() if lines else type(orig).__name__
    return first if len(first) <= _MAX_DETAIL else first[: _MAX_DETAIL - 3] + "..."


def failure(exc: BaseException, where: str, doing: str, wait_s: float) -> NotAssessedError:
    """The one-line error for `exc`, raised while trying to `doing` the database at `where`."""
    if isinstance(exc, DBAPIError) and is_busy(exc):
        return NotAssessedError(
            f"inventory database {where} is busy: another process held its lock for more than "
            f"{wait_s:g} s (wait longer with {WAIT_ENV}=SECONDS)"
        )
    if isinstance(exc, OverflowError):
        return NotAssessedError(
            f"cannot {doing} inventory database {where}: a value is too large to store ({detail(exc)})"
        )
    return NotAssessedError(f"cannot {doing} inventory database {where}: {detail(exc)}")


@contextmanager
def translated(where: str, doing: str, wait_s: float) -> Iterator[None]:
    """Run the block, turning any database failure into NotAssessedError (exit 2, one line).

    OverflowError is SQLite refusing an integer beyond 64 bits (SQLAlchemy passes it on unwrapped).
    """
    try:
        yield
    except (SQLAlchemyError, CommandError, OverflowError) as exc:
        raise failure(exc, where, doing, wait_s) from exc
