"""`gpurack accept` for people: the seven rows with their figures, then the cost per accepted unit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.text import Text

from gpurack.formatting import quantity
from gpurack.render.console import stdout_console
from gpurack.render.text import table, text
from gpurack.render.verdicts import verdict_text

STEP_NAMES = {
    "accept.queue": "1 queued job",
    "accept.staging": "2 data and weights",
    "accept.allreduce": "3 communication",
    "accept.train": "4 training window",
    "accept.restore": "5 checkpoint, kill, restore",
    "accept.labels": "6 labels",
    "accept.cost": "7 useful work vs baseline",
}


def _figure(row: Mapping[str, Any]) -> str:
    measured = row.get("measured")
    if not isinstance(measured, (int, float)) or isinstance(measured, bool):
        return "-"
    unit = str(row.get("unit") or "")
    if row.get("id") == "accept.labels":
        return f"{measured:g} of {text(row.get('expected'))} nodes"
    if "/sample" in unit:
        return f"{measured:.3g} {unit}"
    return quantity(float(measured), unit or None)


def _limit(row: Mapping[str, Any]) -> str:
    expected = row.get("expected")
    if isinstance(expected, Mapping):
        return ", ".join(f"{k.removesuffix('_s').replace('_', ' ')} {v}" for k, v in expected.items())
    return ""


def _size(value: Any) -> str:
    """Bytes as MB or GB (decimal, as the GB/s figures)."""
    if not isinstance(value, (int, float)):
        return "?"
    return f"{value / 1e9:.2f} GB" if value >= 1e9 else f"{value / 1e6:.1f} MB"


def _notes(row: Mapping[str, Any]) -> str:
    """The figures beside the row's own: what a person asks next."""
    d = row.get("details") or {}
    notes = {
        "accept.staging": lambda: f"{_size(d.get('bytes'))} at {text(d.get('mb_per_s'))} MB/s",
        "accept.allreduce": lambda: (
            f"{text(d.get('backend'))}, {text(d.get('world_size'))} ranks, "
            f"{_size(d.get('bytes'))} x {text(d.get('iterations'))}"
        ),
        "accept.train": lambda: (
            f"{text(d.get('steps'))} steps on {text(d.get('device'))}, "
            f"loss {text(d.get('first_loss'))} -> {text(d.get('loss'))}"
        ),
        "accept.restore": lambda: (
            f"checkpoint {text(d.get('checkpoint_write_s'))} s for "
            f"{_size(d.get('checkpoint_bytes'))}; {text(d.get('steps_lost'))} steps lost"
        ),
        "accept.labels": lambda: ", ".join(
            sorted({v for node in d.get("gpu", {}).values() for v in node.values()})
        ),
        "accept.cost": lambda: (
            f"{quantity(float(d.get('gpu_hours') or 0), 'GPU-h')}, "
            f"{text(d.get('total'))} {text(d.get('currency'))}"
        ),
    }.get(str(row.get("id")))
    if not d or notes is None or row.get("verdict") == "skip":
        return ""
    return notes()


def acceptance_report(acceptance: Mapping[str, Any]) -> None:
    """The rows of `acceptance` (Acceptance.as_dict()'s shape), one per step, then the cost line."""
    console = stdout_console()
    title = f"acceptance {acceptance['name']} ({acceptance['team']})"
    out = table(title, "step", "verdict", "figure", "limit", "details")
    for row in acceptance["results"]:
        details = "; ".join(x for x in (_notes(row), str(row.get("reason") or "")) if x)
        out.add_row(
            STEP_NAMES.get(str(row.get("id")), text(row.get("id"))),
            verdict_text(row.get("verdict")),
            _figure(row),
            _limit(row),
            details,
        )
    console.print(out)
    per_unit = acceptance.get("cost_per_unit")
    if isinstance(per_unit, (int, float)):
        currency = acceptance.get("currency") or ""
        units = quantity(float(acceptance.get("accepted_units") or 0))
        console.print(
            Text.assemble(
                ("cost per accepted unit: ", "bold"),
                f"{per_unit:.3g} {currency}/sample over {units} samples ({acceptance['outcome']})".replace(
                    "  ", " "
                ),
            )
        )
    console.print(Text.assemble(("verdict: ", "bold"), verdict_text(acceptance["verdict"])))
