"""A real, throwaway PostgreSQL server for the inventory tests (Debian's postgresql package).

One server per test session, started on first use on 127.0.0.1 and a free port, stopped at
exit; each test gets its own fresh database. initdb refuses to run as root, so as root the
server runs as the `postgres` user through runuser, with its data in a /tmp folder that user
owns (pytest's tmp_path lives under a 0700 /tmp/pytest-of-root that postgres cannot enter).
Without the server binaries, tests skip and say how to install them.
"""

from __future__ import annotations

import atexit
import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

INSTALL_HINT = "apt-get install -y postgresql"


def find_bindir() -> Path | None:
    """The newest /usr/lib/postgresql/<version>/bin holding initdb and pg_ctl, or None."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[4]) if Path(p).parts[4].isdigit() else 0,
    )
    for initdb in reversed(candidates):
        bindir = Path(initdb).parent
        if (bindir / "pg_ctl").is_file():
            return bindir
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PostgresServer:
    bindir: Path
    datadir: Path
    port: int
    user: str | None  # run the server binaries as this OS user (None: as ourselves)
    _databases: itertools.count[int]

    def _run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        command = [str(a) for a in argv]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)

    def start(self) -> None:
        result = self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.datadir / "data"),
            "-U",
            "gpurack",
            "--auth=trust",
            "-E",
            "UTF8",
            "-N",
        )
        if result.returncode != 0:
            raise RuntimeError(f"initdb failed: {result.stdout}{result.stderr}")
        options = f"-p {self.port} -k {self.datadir} -c listen_addresses=127.0.0.1 -c fsync=off"
        result = self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.datadir / "data"), "-o", options,
            "-l", str(self.datadir / "server.log"), "-w", "-t", "60", "start",
        )  # fmt: skip
        if result.returncode != 0:
            log = (
                (self.datadir / "server.log").read_text(errors="replace")
                if (self.datadir / "server.log").exists()
                else ""
            )
            raise RuntimeError(f"pg_ctl start failed: {result.stdout}{result.stderr}{log}")

    def stop(self) -> None:
        self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.datadir / "data"), "-m", "immediate", "-w", "stop"
        )
        shutil.rmtree(self.datadir, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://gpurack@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        name = f"gpurack_test_{next(self._databases)}"
        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user=gpurack dbname=postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
        return self.url(name)


_SERVER: PostgresServer | None = None
_FAILURE: str | None = None


def _server_user() -> str | None:
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("running as root and there is no 'postgres' user to run initdb as (initdb refuses root)")
    if shutil.which("runuser") is None:
        pytest.skip("running as root without runuser: cannot start PostgreSQL as the 'postgres' user")
    return "postgres"


def shared_server() -> PostgresServer:
    """The session's PostgreSQL server, started on first use; skips when it cannot exist here."""
    global _SERVER, _FAILURE  # noqa: PLW0603 - one server per test session, shared across modules
    if _SERVER is not None:
        return _SERVER
    if _FAILURE is not None:
        pytest.fail(_FAILURE)
    bindir = find_bindir()
    if bindir is None:
        pytest.skip(
            f"PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb): {INSTALL_HINT}"
        )
    user = _server_user()
    datadir = Path(tempfile.mkdtemp(prefix="gpurack-pg-"))
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(datadir, entry.pw_uid, entry.pw_gid)
    server = PostgresServer(bindir, datadir, _free_port(), user, itertools.count(1))
    try:
        server.start()
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        server.stop()
        _FAILURE = f"could not start a PostgreSQL test server from {bindir}: {exc}"
        pytest.fail(_FAILURE)
    atexit.register(server.stop)
    _SERVER = server
    return server


def backend_url(backend: str, tmp_path: Path) -> str:
    """A fresh, empty inventory database URL on `backend` ("sqlite" or "postgresql")."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'inventory.db'}"
    return shared_server().create_database()


# Use as `@pytest.fixture(params=BACKENDS)`: every store test runs on SQLite and on a real PostgreSQL.
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
