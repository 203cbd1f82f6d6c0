"""How a verdict looks on a terminal: the one style table, keyed by the result model's Verdict."""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import Verdict
from rich.text import Text

VERDICT_STYLE: dict[Verdict, str] = {
    Verdict.FAIL: "bold red",
    Verdict.WARN: "yellow",
    Verdict.SKIP: "dim",
    Verdict.PASS: "green",
}


def style_of(verdict: object) -> str:
    """The style of a verdict or its string; none for anything else."""
    try:
        return VERDICT_STYLE[Verdict.parse(verdict)]
    except ValueError:
        return ""


def verdict_text(verdict: object) -> Text:
    """A verdict as styled text; `-` when there is none (a node without results)."""
    if verdict is None:
        return Text("-")
    return Text(str(verdict), style=style_of(verdict))
