# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Errors raised by the pure parsers, gatherers and the capture reader, and how they quote input.

A capture is untrusted data: whatever of it lands in an error message goes through
`excerpt` (about 80 characters, control characters escaped), and every message of these
errors is clipped to MESSAGE_MAX_CHARS as a last guard, so a 100 MB line never becomes a
100 MB message and no escape sequence reaches the operator's terminal. Stdlib only.
"""

from __future__ import annotations

EXCERPT_CHARS = 80
MESSAGE_MAX_CHARS = 400


def excerpt(text: object, limit: int = EXCERPT_CHARS) -> str:
    """`text` quoted for an error message: its repr, cut to `limit` characters with its length said.

    A string shows at most `limit` of its characters, quoted; another value (a JSON entry) its
    repr cut to `limit`. repr escapes control characters, so no escape sequence gets through.
    """
    if not isinstance(text, str):
        shown = repr(text)
        return shown if len(shown) <= limit else f"{shown[:limit]}... ({len(shown)} characters)"
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def clip_message(message: str, limit: int = MESSAGE_MAX_CHARS) -> str:
    """One printable line of at most `limit` characters (control characters escaped, e.g. '\\x1b')."""
    head = message[: limit + 1]
    safe = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in head)
    if len(safe) <= limit and len(message) <= limit:
        return safe
    return safe[: limit - 3] + "..."


class InputError(ValueError):
    """Bad input (tool output, a capture file): the message names where, clipped by clip_message."""

    def __init__(self, message: str) -> None:
        super().__init__(clip_message(str(message)))


class FactsError(InputError):
    """Tool output is malformed or truncated; the message names the source and the problem."""


class CaptureError(InputError):
    """A capture bundle is unreadable, malformed or unsafe to read; the message names the file."""
