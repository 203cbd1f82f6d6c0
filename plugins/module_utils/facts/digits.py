# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Refuse numbers too long for int() before a parser meets them (stdlib only).

CPython's int() refuses decimal strings of more than 4300 digits with a ValueError (its
guard against quadratic-time conversion); json.loads does too. No tool prints such a
number, so a capture holding one is malformed: the parsers call `refuse_long_numbers` on
their input first and report it as FactsError, like any other malformed output.
"""

from __future__ import annotations

import re

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError

MAX_DIGITS = 4300
_LONG_NUMBER = re.compile(rf"\d{{{MAX_DIGITS + 1},}}")


def refuse_long_numbers(text: str, source: str) -> None:
    """Raise FactsError (naming `source`) when `text` holds a run of more than MAX_DIGITS digits."""
    match = _LONG_NUMBER.search(text)
    if match is not None:
        raise FactsError(f"{source}: a number of {len(match.group())} digits (more than {MAX_DIGITS})")
