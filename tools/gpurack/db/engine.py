"""The inventory database: the engine and its sessions, migrated on open, safe to share between processes.

SQLite by default (`$GPURACK_DB` or ~/.local/share/gpurack/inventory.db); PostgreSQL with
`GPURACK_DB=postgresql://...` through psycopg 3. The schema lives in Alembic revisions under
`migrations/`; `connect()` upgrades the database to the newest one, so nobody runs alembic.

Several gpurack processes may write at once. On SQLite, a write transaction (a run, a
migration) starts with BEGIN IMMEDIATE, so it takes the database's write lock before it reads
anything and the others wait for it (busy_timeout); on PostgreSQL, rows are upserted and
migrations take an advisory lock (migrations/env.py), waiting at most lock_timeout. Either
wait is `failures.wait_seconds()`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, create_engine, event
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import DBAPIError, NoSuchModuleError
from sqlalchemy.orm import Session, sessionmaker

from gpurack.db import failures
from gpurack.db.urls import database_url, mask, sqlite_file
from gpurack.errors import NotAssessedError, UsageError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# Alembic keeps its migration context in module globals: one migration per process at a time.
_MIGRATE_LOCK = threading.Lock()
# How a SQLite transaction begins, set per engine through this execution option.
_BEGIN = "gpurack_sqlite_begin"
_ATTEMPTS = 3
T = TypeVar("T")


def _sqlite_setup(engine: Engine, wait_s: float) -> None:
    """Foreign keys, the busy wait and explicit transactions on every SQLite connection."""

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # pysqlite's own BEGIN is off: it skips DDL (two first runs then race on the migration).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        # SQLite ignores ON DELETE CASCADE unless foreign keys are switched on per connection.
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(wait_s * 1000)}")
        cursor.close()

    def on_begin(conn: Connection) -> None:
        conn.exec_driver_sql(f"BEGIN {conn.get_execution_options().get(_BEGIN, 'DEFERRED')}")

    event.listen(engine, "connect", on_connect)
    event.listen(engine, "begin", on_begin)


def _alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head_revision() -> str | None:
    return ScriptDirectory.from_config(_alembic_config()).get_current_head()


def _writer(engine: Engine) -> Engine:
    """`engine` with SQLite transactions that take the write lock first (BEGIN IMMEDIATE)."""
    return engine.execution_options(**{_BEGIN: "IMMEDIATE"})


def _check_known(engine: Engine, script: ScriptDirectory, current: str | None) -> None:
    if current is not None and current not in {rev.revision for rev in script.walk_revisions()}:
        raise UsageError(
            f"inventory database {mask(engine.url)} has schema revision {current}, unknown to this "
            "gpurack: it was written by a newer version"
        )


def migrate(engine: Engine, *, create: bool = True) -> None:
    """Upgrade the database behind `engine` to the newest schema (no-op when current).

    The revision is read first without a write lock; only an upgrade takes it, and then reads
    the revision again: whoever waited finds the schema another process just created.

    Raises:
        UsageError: the schema is from a newer gpurack; or the database is empty and not `create`.
    """
    cfg = _alembic_config()
    script = ScriptDirectory.from_config(cfg)
    head = script.get_current_head()
    with _MIGRATE_LOCK:
        with engine.connect() as conn:
            current = MigrationContext.configure(conn).get_current_revision()
        if current == head:
            return
        if current is None and not create:
            raise UsageError(
                f"inventory database {mask(engine.url)} holds no inventory yet: "
                "`gpurack validate` and `gpurack run` record one"
            )
        _check_known(engine, script, current)
        with _writer(engine).begin() as conn:
            current = MigrationContext.configure(conn).get_current_revision()
            if current == head:
                return
            _check_known(engine, script, current)
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")


@dataclass(frozen=True, slots=True)
class Database:
    """An open, migrated inventory database; every use of it goes through `reading()` or `transact()`."""

    url: URL
    engine: Engine
    sessions: sessionmaker[Session]
    writes: sessionmaker[Session]
    wait_s: float

    @property
    def shown_url(self) -> str:
        return mask(self.url)

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """A read-only session; a database failure in the block is a NotAssessedError."""
        with failures.translated(self.shown_url, "read", self.wait_s), self.sessions() as session:
            yield session

    def transact(self, work: Callable[[Session], T]) -> T:
        """Run `work` in one write transaction and commit; retried after a PostgreSQL deadlock.

        Raises:
            NotAssessedError: the database failed, stayed busy, or refused a value.
        """
        with failures.translated(self.shown_url, "write to", self.wait_s):
            for attempt in range(1, _ATTEMPTS + 1):
                try:
                    with self.writes.begin() as session:
                        return work(session)
                except DBAPIError as exc:
                    if attempt == _ATTEMPTS or failures.sqlstate(exc) not in failures.RETRY_STATES:
                        raise
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def close(self) -> None:
        self.engine.dispose()


def _engine(url: URL, wait_s: float) -> Engine:
    connect_args: dict[str, Any] = {}
    if url.drivername.startswith("postgresql"):
        # lock_timeout bounds waits on rows another process is writing and on the migration lock.
        # 0 would mean no limit to PostgreSQL: wait at least a millisecond.
        options = f"{url.query.get('options') or ''} -c lock_timeout={max(1, int(wait_s * 1000))}"
        connect_args = {"connect_timeout": 10, "options": options.strip()}
    try:
        engine = create_engine(
            url,
            connect_args=connect_args,
            # Facts are JSON already; default=str keeps one odd value (a datetime) from failing a run.
            json_serializer=lambda obj: json.dumps(obj, default=str),
        )
    except (NoSuchModuleError, ImportError) as exc:
        raise UsageError(
            f"cannot use database URL {mask(url)}: driver missing ({exc}); install gpurack[postgres]"
        ) from exc
    if engine.dialect.name == "sqlite":
        _sqlite_setup(engine, wait_s)
    return engine


def _prepare_file(url: URL, create: bool) -> None:
    """Make the SQLite file's folder; without `create`, refuse a file that is not there."""
    path = sqlite_file(url)
    if path is None:
        return
    if not create:
        if not path.exists():
            raise UsageError(
                f"no inventory database at {path}: nothing recorded yet (`gpurack validate` and "
                "`gpurack run` record runs; --db or $GPURACK_DB names another)"
            )
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NotAssessedError(
            f"cannot create the directory of inventory database {mask(url)}: {exc.strerror or exc}"
        ) from exc


def check_settings(url: str | None = None) -> str:
    """The masked database URL once it and `$GPURACK_DB_TIMEOUT` are known good; opens nothing.

    Raises:
        UsageError: (64) bad or unsupported URL, or a bad timeout.
    """
    failures.wait_seconds()
    return mask(database_url(url))


def connect(url: str | None = None, *, create: bool = True) -> Database:
    """Open (creating and migrating as needed) the inventory database.

    Without `create` (the read-only verbs), a missing SQLite file or an empty database is a
    UsageError and nothing is created.

    Raises:
        UsageError: (64) bad or unsupported URL, schema from a newer gpurack, nothing to read;
            NotAssessedError: (2) the server is unreachable, the file cannot be opened, or busy.
    """
    wait_s = failures.wait_seconds()
    parsed = database_url(url)
    _prepare_file(parsed, create)
    engine = _engine(parsed, wait_s)
    try:
        with failures.translated(mask(parsed), "open", wait_s):
            migrate(engine, create=create)
    except BaseException:
        engine.dispose()
        raise
    sessions = sessionmaker(engine, expire_on_commit=False)
    writes = sessionmaker(_writer(engine), expire_on_commit=False)
    return Database(parsed, engine, sessions, writes, wait_s)
