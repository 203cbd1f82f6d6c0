"""report.html: the Jinja2 template `templates/report.html.j2` rendered with autoescape on.

The page is one self-contained file (the CSS of `templates/report.css` inlined, no scripts,
nothing fetched), so it can be mailed or attached as is. Every value reaches the page
through a `{{ … }}` expression, which autoescape escapes; the filters below only format.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import jinja2
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import VERDICT_ORDER

from gpurack import formatting
from gpurack.report import text

TEMPLATE = "report.html.j2"


@cache
def environment() -> jinja2.Environment:
    """The template environment: package templates, autoescape, undefined names are errors."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("gpurack.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        text=formatting.text,
        mib=formatting.mib,
        pcie=formatting.pcie_now_max,
        percent=formatting.percent,
        verdict_word=text.verdict_word,
        check_title=text.check_title,
        result_counts=text.result_counts,
        value=text.value,
        css_number=css_number,
        duration=formatting.duration,
        when=formatting.timestamp,
        clamp=clamp,
        change=formatting.change,
        yes_no=formatting.yes_no,
        outcome_word=text.outcome_word,
        patch_section_line=text.patch_section_line,
        patch_node=text.patch_node,
    )
    return env


def css_number(x: float) -> str:
    """A number for a style attribute: `83.6`, `80` (no exponent, no grouping)."""
    return f"{x:g}"


def clamp(x: float, low: float = 0.0, high: float = 100.0) -> float:
    """x within [low, high]: a bar never draws past its ends."""
    return max(low, min(high, x))


def html_page(doc: Mapping[str, Any]) -> str:
    """The whole report.html."""
    context = {
        "doc": doc,
        "run_line": text.run_line(doc),
        "summary_line": text.summary_line(doc),
        "verdicts": [v.value for v in VERDICT_ORDER],
        "missing": formatting.MISSING,
        "patch_steps": text.PATCH_STEPS,
    }
    return environment().get_template(TEMPLATE).render(context)
