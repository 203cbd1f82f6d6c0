"""The inventory database: models, engine, migrations and queries; the only user of SQLAlchemy and Alembic.

`connect()` opens (and migrates) a database; `Repository` reads and writes the records of
`gpurack.records`. Callers go through `gpurack.inventory`, which holds the domain rules.
"""

from __future__ import annotations

from gpurack.db.engine import (
    DEFAULT_DB,
    MIGRATIONS,
    Database,
    connect,
    database_url,
    head_revision,
    mask,
    migrate,
    shown,
)
from gpurack.db.models import Base
from gpurack.db.repository import Repository

__all__ = [
    "DEFAULT_DB",
    "MIGRATIONS",
    "Base",
    "Database",
    "Repository",
    "connect",
    "database_url",
    "head_revision",
    "mask",
    "migrate",
    "shown",
]
