"""A plain table of text cells, some styled, for callers outside the render package (the lab)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text

from gpurack.render.console import stdout_console

# Off a terminal rich assumes 80 columns; piped tables get room for their widest rows.
PIPED_WIDTH = 160


@dataclass(frozen=True, slots=True)
class Styled:
    """A cell's text with a rich style name ("green", "bold red")."""

    text: str
    style: str


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[str | Styled]]) -> None:
    """Print a titled table on stdout; every cell is made printable like all of gpurack's output."""
    grid = Table(title=title, title_justify="left")
    for column in columns:
        grid.add_column(column)
    for row in rows:
        grid.add_row(*(Text(c.text, style=c.style) if isinstance(c, Styled) else c for c in row))
    stdout_console(width=None if sys.stdout.isatty() else PIPED_WIDTH).print(grid)
