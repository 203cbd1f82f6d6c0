"""`gpurack accept` for people: the rows with their figures (seven of training, or eight of
inference), then the cost per accepted unit (a sample, or 1,000 requests)."""

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
    "infer.cold_start": "1 cold start",
    "infer.warm_start": "2 warm start",
    "infer.rollout": "5 rollout under load",
    "infer.autoscale": "6 autoscaling",
    "infer.isolation": "7 beside training",
    "infer.cost": "8 cost vs an API",
}
LOAD_ROW = "infer.load.c"  # two rows, 3 and 4, one per load level


def _step(row_id: str, index: int) -> str:
    if row_id.startswith(LOAD_ROW):
        return f"{index + 1} load, {row_id.removeprefix(LOAD_ROW)} in flight"
    return STEP_NAMES.get(row_id, row_id)


def _figure(row: Mapping[str, Any]) -> str:
    measured = row.get("measured")
    if not isinstance(measured, (int, float)) or isinstance(measured, bool):
        return "-"
    unit = str(row.get("unit") or "")
    if row.get("id") == "accept.labels":
        return f"{measured:g} of {text(row.get('expected'))} nodes"
    if "/sample" in unit or "/1000 requests" in unit:
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


def _phases(d: Mapping[str, Any]) -> str:
    """A start's phases, in order, and whether the node's cache held the model."""
    names = ("scheduling", "container_start", "download", "model_load", "first_answer")
    phases = ", ".join(
        f"{n.replace('_', ' ')} {text(d.get(n + '_s'))} s" for n in names if d.get(n + "_s") is not None
    )
    return f"{phases}; cache {'hit' if d.get('cache_hit') else 'miss'}"


def _load_notes(d: Mapping[str, Any]) -> str:
    return (
        f"p50 {text(d.get('p50_ms'))} ms, p95 {text(d.get('p95_ms'))} ms, {text(d.get('rps'))} req/s, "
        f"{text(d.get('failures'))} failed"
    )


def _notes(row: Mapping[str, Any]) -> str:
    """The figures beside the row's own: what a person asks next."""
    d = row.get("details") or {}
    if str(row.get("id")).startswith(LOAD_ROW):
        return _load_notes(d) if d and row.get("verdict") != "skip" else ""
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
        "infer.cold_start": lambda: _phases(d),
        "infer.warm_start": lambda: _phases(d),
        "infer.rollout": lambda: (
            f"rolled out in {text(d.get('rollout_s'))} s, {text(d.get('requests'))} requests"
        ),
        "infer.autoscale": lambda: f"up {text(d.get('up_s'))} s, down {text(d.get('down_s'))} s",
        "infer.isolation": lambda: (
            f"p99 {text(d.get('p99_beside_training_ms'))} ms beside, {text(d.get('p99_alone_ms'))} ms alone"
        ),
        "infer.cost": lambda: (
            f"{text(d.get('total'))} {text(d.get('currency'))} for {text(d.get('accepted_requests'))} answers"
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
    for index, row in enumerate(acceptance["results"]):
        details = "; ".join(x for x in (_notes(row), str(row.get("reason") or "")) if x)
        out.add_row(
            _step(str(row.get("id")), index),
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
        if acceptance.get("test") == "inference":
            line = f"{per_unit * 1000:.3g} {currency}/1000 requests over {units} requests answered well"
        else:
            line = f"{per_unit:.3g} {currency}/sample over {units} samples"
        console.print(
            Text.assemble(
                ("cost per accepted unit: ", "bold"),
                f"{line} ({acceptance['outcome']})".replace("  ", " "),
            )
        )
    console.print(Text.assemble(("verdict: ", "bold"), verdict_text(acceptance["verdict"])))
