"""Check results for people: the terminal table and the Markdown report of `gpurack validate`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import VERDICTS, is_finding, rank
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpurack.mdtext import escape_text
from gpurack.render.console import stdout_console
from gpurack.render.text import table, text, with_unit
from gpurack.render.verdicts import style_of, verdict_text


def sort_results(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Results in the result model's verdict order, keeping the checks' own order within each."""
    return sorted(results, key=_rank)


def _rank(result: Mapping[str, Any]) -> int:
    verdict = result.get("verdict")
    return rank(str(verdict)) if str(verdict) in VERDICTS else len(VERDICTS)


def results_table(host: str, results: Sequence[Mapping[str, Any]], summary: Mapping[str, Any]) -> None:
    """Check results (failures first), what to do about each failure, the skips, then the verdict."""
    ordered = sort_results(results)
    console = stdout_console()
    console.print(_table(host, ordered))
    _print_findings(console, ordered)
    skipped = [r for r in ordered if r.get("verdict") == "skip"]
    if skipped:
        console.print(f"skipped ({len(skipped)}):", style="dim")
        for result in skipped:
            console.print(f"  {text(result.get('title'))}: {text(result.get('reason'))}", style="dim")
    console.print(_summary_line(summary))


def _table(host: str, ordered: Sequence[Mapping[str, Any]]) -> Table:
    """Every result but the skips; measured tiers add each figure's share of its limit."""
    measured = any(r.get("percent") is not None for r in ordered)
    columns = ["verdict", "check", "component", "measured", "expected"] + (["% of limit"] if measured else [])
    out = table(f"validation of {host}", *columns)
    for result in ordered:
        if str(result.get("verdict", "")) == "skip":
            continue
        row: list[Text | str] = [
            verdict_text(str(result.get("verdict", ""))),
            text(result.get("title") or result.get("id")),
            text(result.get("component")),
            with_unit(result.get("measured"), result.get("unit")),
            with_unit(result.get("expected"), result.get("unit")),
        ]
        if measured:
            percent = result.get("percent")
            row.append(f"{percent:.1f} %" if isinstance(percent, int | float) else "")
        out.add_row(*row)
    return out


def _print_findings(console: Console, ordered: Sequence[Mapping[str, Any]]) -> None:
    """Each failure and warning with its reason and its fix."""
    for result in ordered:
        verdict = str(result.get("verdict", ""))
        if is_finding(verdict):
            title, reason = text(result.get("title")), text(result.get("reason"))
            console.print(Text.assemble((verdict, style_of(verdict)), f" {title}: {reason}"))
            console.print(f"  fix: {text(result.get('remediation'))}")


def results_markdown(host: str, results: Sequence[Mapping[str, Any]], summary: Mapping[str, Any]) -> str:
    """The same report as results_table, as Markdown; host and check text escaped (`gpurack.mdtext`)."""
    lines = [f"# Validation of {escape_text(host)}", "", escape_text(_summary_line(summary)), ""]
    lines += ["| verdict | component | check | measured | expected | hint |", "|---|---|---|---|---|---|"]
    for r in sort_results(results):
        cells = [
            str(r.get("verdict", "")),
            text(r.get("component")),
            text(r.get("title") or r.get("id")),
            with_unit(r.get("measured"), r.get("unit")),
            with_unit(r.get("expected"), r.get("unit")),
            _hint(r),
        ]
        lines.append("| " + " | ".join(escape_text(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _summary_line(summary: Mapping[str, Any]) -> str:
    """`verdict: fail (pass 10, warn 1, fail 2, skip 3)`."""
    counts = ", ".join(f"{key} {summary.get(key, 0)}" for key in ("pass", "warn", "fail", "skip"))
    return f"verdict: {text(summary.get('verdict'))} ({counts})"


def _hint(result: Mapping[str, Any]) -> str:
    """What to do about a result: the remediation when it did not pass, the reason when skipped."""
    verdict = result.get("verdict")
    if verdict == "skip":
        return text(result.get("reason"))
    if is_finding(verdict):
        return text(result.get("remediation") or result.get("reason"))
    return ""
