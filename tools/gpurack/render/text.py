"""Display forms of values and the table shape every view shares."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from rich.table import Table


def text(value: Any) -> str:
    """Display form of a fact value: `-` for null, yes/no, lists and mappings joined."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{key} {text(item)}" for key, item in value.items()) or "none"
    if isinstance(value, list):
        return ", ".join(text(item) for item in value) or "none"
    return str(value)


def cell(value: Any) -> str:
    """A table cell: `-` for null or empty."""
    return "-" if value is None or value == "" else str(value)


def when(value: datetime | None) -> str:
    """A timestamp to the minute."""
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M")


def with_unit(value: Any, unit: Any) -> str:
    """A value followed by its unit, `-` when unknown."""
    if value is None:
        return "-"
    return f"{text(value)} {unit}" if unit else text(value)


def table(title: str, *columns: str) -> Table:
    """A titled table with the given column headers."""
    out = Table(title=title, title_justify="left", caption_justify="left")
    for column in columns:
        out.add_column(column)
    return out


def note_unavailable(out: Table, fact: Mapping[str, Any]) -> None:
    """Caption a table whose fact was not available with the reason."""
    if fact.get("available") is False:
        out.caption = f"not available: {text(fact.get('reason'))}"
    elif not out.row_count:
        out.caption = "none found"
