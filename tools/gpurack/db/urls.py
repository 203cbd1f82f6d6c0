"""Database URLs: read what operators type, and show it without its secrets.

Passwords get pasted raw (`postgresql://admin:p@ss?w/rd@db/inv`), so the URL is split here
before SQLAlchemy parses it: a password runs to the last '@' (as urllib reads a user part) and
is percent-encoded, so no piece of it is taken for a host or a database name, which drivers
repeat in their errors. `mask()` is the one way a URL is printed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlencode

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from gpurack.errors import UsageError

DEFAULT_DB = Path("~/.local/share/gpurack/inventory.db")
HIDDEN = "***"
FORMS = "a file path, sqlite:///PATH or postgresql://USER[:PASSWORD]@HOST[:PORT]/DB"

_SCHEMES = {
    "sqlite": "sqlite",
    "sqlite+pysqlite": "sqlite",
    "postgresql": "postgresql+psycopg",
    "postgres": "postgresql+psycopg",
    "postgresql+psycopg": "postgresql+psycopg",
}


@dataclass(frozen=True, slots=True)
class _Parts:
    """A URL cut at its user part: `scheme://userinfo@rest` (userinfo None: there is none)."""

    scheme: str
    userinfo: str | None
    rest: str


def _split(raw: str) -> _Parts | None:
    """`raw` cut at the '@' that ends its user part; None when it has no `://`.

    With a password (a ':' in the user part), that '@' is the last one of all: a password may
    hold '@', '/' and '?', a host cannot, and a database name or query value rarely does. Without
    one, it is the last '@' before the first '/' or '?' that follows an '@'.
    """
    scheme, sep, tail = raw.partition("://")
    if not sep:
        return None
    if tail.startswith("/") or "@" not in tail:
        return _Parts(scheme, None, tail)
    last = tail.rfind("@")
    user, colon, _ = tail[:last].partition(":")
    if colon and not any(c in user for c in "/?"):
        return _Parts(scheme, tail[:last], tail[last + 1 :])
    first = tail.find("@")
    ends = [i for i in (tail.find("/", first), tail.find("?", first)) if i >= 0]
    at = tail.rfind("@", 0, min(ends, default=len(tail)))
    return _Parts(scheme, tail[:at], tail[at + 1 :])


def _is_secret(key: str) -> bool:
    lowered = key.lower()
    return any(word in lowered for word in ("pass", "secret", "token")) or lowered == "pwd"


def _mask_query(query: str) -> str:
    pairs = (pair.partition("=") for pair in query.split("&"))
    return "&".join(f"{k}={HIDDEN}" if sep and _is_secret(k) else f"{k}{sep}{v}" for k, sep, v in pairs)


def _mask_text(raw: str) -> str:
    """`raw` with its password and secret query values hidden, for text SQLAlchemy cannot parse."""
    parts = _split(raw)
    if parts is None:
        return raw
    where, sep, query = parts.rest.partition("?")
    shown = f"{where}{sep}{_mask_query(query)}" if sep else where
    if parts.userinfo is None:
        return f"{parts.scheme}://{shown}"
    user, colon, _ = parts.userinfo.partition(":")
    return f"{parts.scheme}://{user}{':' + HIDDEN if colon else ''}@{shown}"


def mask(url: str | URL) -> str:
    """`url` as users write it (no driver suffix), its password and secret query values as ***.

    The only way gpurack prints a database URL; it splits the URL as `database_url()` does, so
    what is hidden is exactly what would be sent as the password.
    """
    if isinstance(url, str):
        try:
            return mask(parse(url))
        except UsageError:
            return _mask_text(url)
    base = url.set(drivername=url.get_backend_name(), query={})
    text = base.render_as_string(hide_password=True)
    if not url.query:
        return text
    query = {k: HIDDEN if _is_secret(k) else v for k, v in url.query.items()}
    return f"{text}?{urlencode(query, doseq=True, safe='*/:@')}"


def _quoted(userinfo: str) -> str:
    user, colon, password = userinfo.partition(":")
    encoded = quote(unquote(user), safe="")
    return f"{encoded}:{quote(unquote(password), safe='')}" if colon else encoded


def parse(raw: str) -> URL:
    """`raw` as a SQLAlchemy URL, its user and password percent-encoded first.

    Raises:
        UsageError: (64) it cannot be parsed.
    """
    parts = _split(raw)
    if parts is None:
        raise UsageError(f"cannot parse database URL {_mask_text(raw)}: use {FORMS}")
    text = raw if parts.userinfo is None else f"{parts.scheme}://{_quoted(parts.userinfo)}@{parts.rest}"
    try:
        return make_url(text)
    except ValueError as exc:  # int() of the port
        raise UsageError(f"cannot parse database URL {_mask_text(raw)}: the port is not a number") from exc
    except ArgumentError as exc:
        raise UsageError(f"cannot parse database URL {_mask_text(raw)}: use {FORMS}") from exc


def database_url(url: str | None = None) -> URL:
    """The SQLAlchemy URL for `url`, else `$GPURACK_DB`, else the default SQLite file.

    A value without `://` is a SQLite file path.

    Raises:
        UsageError: (64) the URL cannot be parsed or names an unsupported database.
    """
    raw = url or os.environ.get("GPURACK_DB") or str(DEFAULT_DB)
    if "://" not in raw:
        return URL.create("sqlite", database=str(Path(raw).expanduser()))
    parsed = parse(raw)
    driver = _SCHEMES.get(parsed.drivername)
    if driver is None:
        raise UsageError(f"unsupported database URL {mask(parsed)}: use {FORMS}")
    parsed = parsed.set(drivername=driver)
    if driver != "sqlite":
        return parsed
    if parsed.username is not None or parsed.password is not None or parsed.host or parsed.port:
        raise UsageError(
            f"SQLite database URL {mask(parsed)} names a user or a host: a SQLite inventory is a file, "
            "write sqlite:///PATH (or the path alone)"
        )
    if parsed.database not in (None, "", ":memory:"):
        parsed = parsed.set(database=str(Path(parsed.database or "").expanduser()))
    return parsed


def sqlite_file(url: URL) -> Path | None:
    """The file behind a SQLite URL; None for another database or an in-memory one."""
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database or "")
