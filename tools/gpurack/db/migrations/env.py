"""Alembic environment for the inventory database: run only through `gpurack.db.migrate()`."""

from __future__ import annotations

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection

from gpurack.db.models import Base

# Any fixed number: it only has to be the same for every gpurack process.
_MIGRATION_LOCK = 0x67707261636B


def run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        # SQLite cannot ALTER most things: later revisions rebuild tables in batch mode.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # Two gpurack processes opening a fresh database at once: the second waits here,
            # then finds the schema current and does nothing.
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
        context.run_migrations()


_connection = context.config.attributes.get("connection")
if not isinstance(_connection, Connection):
    raise RuntimeError(
        "gpurack migrates its database on open (gpurack.db.connect); don't run alembic by hand"
    )
run_migrations(_connection)
