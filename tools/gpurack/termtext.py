"""Text from hosts, switches, the database and inventories made safe for a terminal.

A kernel string, a switch's name or a label recorded in the database is shown as it came,
except for the characters a terminal acts on instead of printing: C0 controls (ESC starts
sequences that clear the screen or retitle the window), DEL, C1 controls (U+0080-U+009F,
CSI among them) and the bidirectional overrides and isolates that reorder what is shown
(the "Trojan Source" characters). Each is written as a visible escape (`\\x1b`, `\\u202e`),
so the operator sees that it was there. The render layer applies `printable` to everything
a console prints; `one_line` is for the `gpurack: ...` lines on stderr, where a newline in a
value must never start a second line that reads like gpurack's own. JSON and YAML output
are machine formats and stay exact.
"""

from __future__ import annotations

import re

# Newline and tab keep their meaning in multi-line output; everything else below is escaped.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_OR_BREAK = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every character a terminal would act on shown as an escape; lines and tabs kept."""
    return _UNSAFE.sub(_visible, text)


def one_line(text: str) -> str:
    """`printable(text)` on one line: newlines, carriage returns and tabs shown as `\\n`, `\\r`, `\\t`."""
    return _UNSAFE_OR_BREAK.sub(_visible, text)
