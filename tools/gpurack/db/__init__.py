"""The inventory database: models, engine, migrations and queries; the only user of SQLAlchemy and Alembic.

`connect()` opens (and migrates) a database; `Repository` reads and writes the records of
`gpurack.records`. Callers go through `gpurack.inventory`, which holds the domain rules.
`mask()` is how any database URL is printed.
"""

from __future__ import annotations

from gpurack.db.engine import (
    MIGRATIONS,
    Database,
    check_settings,
    connect,
    head_revision,
    migrate,
)
from gpurack.db.failures import DEFAULT_WAIT_S, WAIT_ENV
from gpurack.db.models import Base
from gpurack.db.pairs import Pair
from gpurack.db.repository import Repository
from gpurack.db.urls import DEFAULT_DB, database_url, mask

__all__ = [
    "DEFAULT_DB",
    "DEFAULT_WAIT_S",
    "MIGRATIONS",
    "WAIT_ENV",
    "Base",
    "Database",
    "Pair",
    "Repository",
    "check_settings",
    "connect",
    "database_url",
    "head_revision",
    "mask",
    "migrate",
]
