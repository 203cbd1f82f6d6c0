"""The inventory database: URLs, the engine and sessions, migrated on open.

SQLite by default (`$GPURACK_DB` or ~/.local/share/gpurack/inventory.db); PostgreSQL with
`GPURACK_DB=postgresql://...` through psycopg 3. The schema lives in Alembic revisions under
`migrations/`; `connect()` upgrades the database to the newest one, so nobody runs alembic.
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from gpurack.errors import NotAssessedError, UsageError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
DEFAULT_DB = Path("~/.local/share/gpurack/inventory.db")
# Alembic keeps its migration context in module globals: one migration per process at a time.
# Across processes, env.py serialises PostgreSQL upgrades with an advisory lock.
_MIGRATE_LOCK = threading.Lock()

_SCHEMES = {
    "sqlite": "sqlite",
    "sqlite+pysqlite": "sqlite",
    "postgresql": "postgresql+psycopg",
    "postgres": "postgresql+psycopg",
    "postgresql+psycopg": "postgresql+psycopg",
}


def mask(raw: str) -> str:
    """`raw` with any password replaced by ***, for messages."""
    return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", raw)


def database_url(url: str | None = None) -> URL:
    """The SQLAlchemy URL for `url`, else `$GPURACK_DB`, else the default SQLite file.

    A value without `://` is a SQLite file path.

    Raises:
        UsageError: (64) the URL cannot be parsed or names an unsupported database.
    """
    raw = url or os.environ.get("GPURACK_DB") or str(DEFAULT_DB)
    if "://" not in raw:
        return URL.create("sqlite", database=str(Path(raw).expanduser()))
    try:
        parsed = make_url(raw)
    except (ArgumentError, ValueError) as exc:
        raise UsageError(f"cannot parse database URL {mask(raw)}: {exc}") from exc
    driver = _SCHEMES.get(parsed.drivername)
    if driver is None:
        raise UsageError(
            f"unsupported database URL {mask(raw)}: use a file path, sqlite:///PATH or postgresql://HOST/DB"
        )
    parsed = parsed.set(drivername=driver)
    if driver == "sqlite" and parsed.database not in (None, "", ":memory:"):
        parsed = parsed.set(database=str(Path(parsed.database or "").expanduser()))
    return parsed


def shown(url: URL) -> str:
    """`url` as users write it (no driver suffix), password masked."""
    return url.set(drivername=url.get_backend_name()).render_as_string(hide_password=True)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # SQLite ignores ON DELETE CASCADE unless foreign keys are switched on per connection.
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def _alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head_revision() -> str | None:
    return ScriptDirectory.from_config(_alembic_config()).get_current_head()


def migrate(engine: Engine) -> None:
    """Upgrade the database behind `engine` to the newest schema (no-op when current)."""
    cfg = _alembic_config()
    script = ScriptDirectory.from_config(cfg)
    with _MIGRATE_LOCK, engine.begin() as conn:
        current = MigrationContext.configure(conn).get_current_revision()
        if current == script.get_current_head():
            return
        if current is not None and current not in {rev.revision for rev in script.walk_revisions()}:
            raise UsageError(
                f"inventory database {shown(engine.url)} has schema revision {current}, unknown to this "
                "gpurack: it was written by a newer version"
            )
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


@dataclass(frozen=True, slots=True)
class Database:
    """An open, migrated inventory database."""

    url: URL
    engine: Engine
    sessions: sessionmaker[Session]

    @property
    def shown_url(self) -> str:
        return shown(self.url)

    def close(self) -> None:
        self.engine.dispose()


def connect(url: str | None = None) -> Database:
    """Open (creating and migrating as needed) the inventory database.

    Raises:
        UsageError: (64) bad or unsupported URL, schema from a newer gpurack;
            NotAssessedError: (2) the server is unreachable or the file cannot be opened.
    """
    parsed = database_url(url)
    where = shown(parsed)
    if parsed.drivername == "sqlite" and parsed.database not in (None, "", ":memory:"):
        try:
            Path(parsed.database or "").parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise NotAssessedError(
                f"cannot create the directory of inventory database {where}: {exc.strerror or exc}"
            ) from exc
    connect_args: dict[str, Any] = (
        {"connect_timeout": 10} if parsed.drivername.startswith("postgresql") else {}
    )
    try:
        engine = create_engine(
            parsed,
            connect_args=connect_args,
            # Facts are JSON already; default=str keeps one odd value (a datetime) from failing a run.
            json_serializer=lambda obj: json.dumps(obj, default=str),
        )
    except (NoSuchModuleError, ImportError) as exc:
        raise UsageError(
            f"cannot use database URL {where}: driver missing ({exc}); install gpurack[postgres]"
        ) from exc
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    try:
        migrate(engine)
    except DBAPIError as exc:
        engine.dispose()
        detail = str(exc.orig).strip().splitlines()[0] if exc.orig is not None else str(exc)
        raise NotAssessedError(f"cannot open inventory database {where}: {detail}") from exc
    except (SQLAlchemyError, CommandError) as exc:
        engine.dispose()
        raise NotAssessedError(f"cannot migrate inventory database {where}: {exc}") from exc
    return Database(parsed, engine, sessionmaker(engine, expire_on_commit=False))
