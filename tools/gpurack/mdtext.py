"""Text from hosts and checks as literal Markdown: what report.md and validation.md use for every such string.

Markdown renderers pass raw HTML through, turn `[x](javascript:…)` into a live link and
GitHub's turn a bare `https://…`, `www.…` or `a@b.c` into one; a `|` ends a table cell even
inside backticks, and a `- `, `1. ` or `#` at the start of a line opens a list or a heading.
`escape()` leaves none of it as markup: the text reads the same, as text.
"""

from __future__ import annotations

import html
import re
from typing import Any

from gpurack import formatting

# Backslash-escapable characters that start inline markup: code, emphasis, links and images,
# strikethrough, table cells, a heading's closing #s and the backslash itself. `<`, `>` and `&`
# become entities.
_INLINE = re.compile(r"([\\`*_\[\]~|#])")
# GitHub's extended autolinks (`https://x`, `www.x`, `a@b.c`): an escaped `:`, `.` or `@` breaks them.
_AUTOLINK = re.compile(r"(?<=[A-Za-z])(:)(?=//)|(?<![\w.])((?i:www))(\.)|(@)")
# A list item, a setext underline or a thematic break where the text starts a line.
_BLOCK_START = re.compile(r"^(?:([-+=])(?=[\s+=-]|$)|(\d{1,9})([.)])(?=\s|$))")


def escape(item: Any) -> str:
    """One line of literal text for a paragraph, a heading or a table cell; — when missing."""
    return escape_text(formatting.text(item))


def escape_text(shown: str) -> str:
    """`escape()` of a string as it is (an empty one stays empty)."""
    shown = " ".join(shown.splitlines()).strip()
    inline = _INLINE.sub(r"\\\1", html.escape(shown, quote=False))
    linked = _AUTOLINK.sub(_break_autolink, inline)
    return _BLOCK_START.sub(_break_block, linked)


def _break_autolink(match: re.Match[str]) -> str:
    if match.group(2):
        return f"{match.group(2)}\\."
    return "\\" + (match.group(1) or match.group(4))


def _break_block(match: re.Match[str]) -> str:
    if match.group(1):
        return "\\" + match.group(1)
    return f"{match.group(2)}\\{match.group(3)}"


def code(item: Any) -> str:
    """An inline code span that holds `item` literally, however many backticks it contains."""
    shown = " ".join(formatting.text(item).splitlines())
    ticks = "`" * (1 + max((len(run) for run in re.findall(r"`+", shown)), default=0))
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{ticks}{pad}{shown}{pad}{ticks}"


def cell_code(item: Any) -> str:
    """`code(item)` for a table cell; escaped text when it holds a `|` or a backslash.

    A table row splits at every `|` not escaped by a backslash, inside backticks too, and
    renderers differ on what a backslash before it then leaves in the span.
    """
    shown = formatting.text(item)
    return escape(shown) if "|" in shown or "\\" in shown else code(shown)
