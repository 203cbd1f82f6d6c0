"""The report's documents as text and as files in a folder."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gpurack import outfile
from gpurack.report.markdown import markdown
from gpurack.report.page import html_page

FORMATS = ("md", "html", "json")
FILES = {"md": "report.md", "html": "report.html", "json": "report.json"}


def document(doc: Mapping[str, Any], fmt: str) -> str:
    """One document in `fmt` (md, html or json)."""
    if fmt == "md":
        return markdown(doc)
    if fmt == "html":
        return html_page(doc)
    return json.dumps(doc, indent=2, default=str) + "\n"


def write(doc: Mapping[str, Any], folder: Path, formats: Sequence[str], *, force: bool = False) -> list[Path]:
    """Write the documents of `formats` into `folder`; return their paths.

    Each file is written whole or not at all (`gpurack.outfile`). Without `force`, nothing is
    written when one of the files is already there.

    Raises:
        UsageError: a file exists and `force` is off, or the folder or a file cannot be written.
    """
    texts = {folder / FILES[fmt]: document(doc, fmt) for fmt in formats}
    return outfile.write_texts(texts, force=force)
