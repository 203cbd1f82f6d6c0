# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Errors raised by the pure parsers and gatherers (stdlib only)."""

from __future__ import annotations


class FactsError(ValueError):
    """Tool output is malformed or truncated; the message names the source and the problem."""
