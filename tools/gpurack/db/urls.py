"""Database URLs: read what operators type, and show it without its secrets.

Passwords get pasted raw (`postgresql://admin:p@ss?w/rd@db/inv`), so the URL is split here
before SQLAlchemy parses it: the user part ends at the last '@' of the authority (as urllib reads
it) and the password is percent-encoded, so no piece of it is taken for a host or a database
name, which drivers repeat in their errors. `mask()` is the one way a URL is printed.
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


def _split(raw: str, *, greedy: bool) -> _Parts | None:
    """`raw` cut at the '@' that ends its user part; None when it has no `://`.

    Not greedy, that '@' is the last one before the first '/' or '?' that follows an '@' (a
    password may hold '@' and '?'); greedy, it is the last '@' of all (what masking assumes).
    """
    scheme, sep, tail = raw.partition("://")
    if not sep:
        return None
    first = tail.find("@")
    if first < 0 or tail.startswith("/"):
        return _Parts(scheme, None, tail)
    if greedy:
        at = tail.rfind("@")
    else:
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
    """`raw` with everything that may be a password hidden, without parsing it as SQLAlchemy does."""
    parts = _split(raw, greedy=True)
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

    The only way gpurack prints a database URL; text that does not parse is masked as a whole
    from the first ':' of its user part to its last '@'.
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
        UsageError: (64) it cannot be parsed, or a second '@' leaves unclear where the password ends.
    """
    parts = _split(raw, greedy=False)
    if parts is None:
        raise UsageError(f"cannot parse database URL {_mask_text(raw)}: use {FORMS}")
    greedy = _split(raw, greedy=True)
    if greedy is not None and greedy.userinfo != parts.userinfo and ":" in (greedy.userinfo or ""):
        raise UsageError(
            f"database URL {_mask_text(raw)} has an '@' after its host: write '@', '/' and '?' "
            "in the password as %40, %2F and %3F"
        )
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
