"""Run reports: one stored run as report.md, one self-contained report.html and report.json.

`build()` turns a stored run into one document that follows `gpurack/data/report.schema.json`
(docs/report.md); the Markdown and HTML writers render that document, so the three always
agree. Modules: `model` (the document), `findings` (repeated results grouped), `markdown`,
`page` (HTML through the Jinja2 template in `templates/`), `files` (writing them).
"""

from __future__ import annotations

from pathlib import Path

from gpurack.report.files import FILES, FORMATS, document, write
from gpurack.report.markdown import markdown
from gpurack.report.model import SCHEMA_ID, SCHEMA_VERSION, build
from gpurack.report.page import html_page

SCHEMA_PATH = Path(__file__).parents[1] / "data" / "report.schema.json"

__all__ = [
    "FILES",
    "FORMATS",
    "SCHEMA_ID",
    "SCHEMA_PATH",
    "SCHEMA_VERSION",
    "build",
    "document",
    "html_page",
    "markdown",
    "write",
]
