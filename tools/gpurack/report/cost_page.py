"""The cost document (gpurack.cost) as files: cost.json, cost.md, cost.html and two
charts (queue wait per job, GPUs allocated per pool over the window) as SVG images, which
cost.md links and cost.html carries inline as data URIs, so the page stays one file.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from gpurack import formatting, outfile
from gpurack.mdtext import escape, escape_text
from gpurack.report import charts
from gpurack.report.page import environment

FORMATS = ("md", "html", "json")
FILES = {"md": "cost.md", "html": "cost.html", "json": "cost.json"}
CHARTS = {"queue": "cost-queue-wait.svg", "allocation": "cost-gpu-allocation.svg"}
TEMPLATE = "cost.html.j2"
TERMS = ("compute", "network", "storage", "support", "idle", "failed_runs", "operations")


def _moment(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def money(amount: float | None, currency: str) -> str:
    """`1,234.56 EUR`; below 1, four significant digits (`0.03726 EUR`, `0.000123 EUR`)."""
    if amount is None:
        return formatting.MISSING
    if abs(amount) >= 1 or amount == 0:
        return f"{amount:,.2f} {currency}".strip()
    decimals = 3 - math.floor(math.log10(abs(amount)))  # four significant digits
    body = f"{amount:.{decimals}f}".rstrip("0")
    return f"{body} {currency}".strip()


def chart_svgs(doc: Mapping[str, Any]) -> dict[str, str]:
    """The two charts of the document, by CHARTS key."""
    queued = [
        charts.Bar(
            label=f"{job['namespace']}/{job['name']}", value=float(job["queue_wait_s"]), kind=job["outcome"]
        )
        for job in doc["jobs"]
        if job["queue_wait_s"] is not None
    ]
    window = doc["window"]
    series = {
        pool: [(_moment(at), float(gpus)) for at, gpus in points]
        for pool, points in doc["allocation"].items()
    }
    used = set(series) | {p["pool"] for p in doc["pools"] if p["allocated_gpu_hours"] > 0}
    ceilings = {pool: float(gpus) for pool, gpus in doc["capacity"].items() if pool in used}
    return {
        "queue": charts.bars("Queue wait per job (Kueue: created to quota reserved)", "seconds", queued),
        "allocation": charts.steps(
            "GPUs allocated per pool", _moment(window["since"]), _moment(window["until"]), series, ceilings
        ),
    }


def summary_line(doc: Mapping[str, Any]) -> str:
    """`12.3 GPU-hours allocated of 96 (12.8%); 3840 accepted units; effective cost 0.0031 EUR per unit`"""
    hours = doc["gpu_hours"]
    allocated, capacity = formatting.number(hours["allocated"]), formatting.number(hours["capacity"])
    share = 100 * hours["allocated"] / hours["capacity"] if hours["capacity"] else 0.0
    per_unit = money(doc["effective_cost"], doc["currency"])
    units = formatting.number(doc["accepted_units"])
    return (
        f"{allocated} GPU-hours allocated of {capacity} "
        f"({formatting.percent(share)}); {units} accepted units; effective cost {per_unit} per unit"
    )


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


POOL_HEAD = (
    "pool",
    "GPU-hours",
    "allocated",
    "useful",
    "failed",
    "idle",
    "compute",
    "failed runs",
    "idle cost",
)
JOB_HEAD = ("job", "source", "pool", "GPUs", "start", "end", "GPU-hours", "queue wait", "outcome", "units")
HOURS = ("capacity", "allocated", "useful", "failed", "idle")


def _pool_row(pool: Mapping[str, Any], currency: str) -> list[str]:
    hours = [formatting.number(pool[f"{key}_gpu_hours"]) for key in HOURS]
    costs = [money(pool[key], currency) for key in ("compute", "failed_runs", "idle")]
    return [escape(pool["pool"]), *hours, *costs]


def _job_row(job: Mapping[str, Any]) -> list[str]:
    return [
        f"{escape(job['namespace'])}/{escape(job['name'])}",
        job["source"],
        escape(job["pool"]),
        str(job["gpus"]),
        formatting.timestamp(job["start"]),
        formatting.timestamp(job["end"]),
        formatting.number(job["gpu_hours_in_window"]),
        formatting.duration(job["queue_wait_s"]),
        job["outcome"],
        formatting.number(job["units"]),
    ]


def _baseline_lines(baseline: Mapping[str, Any] | None, cur: str) -> list[str]:
    if baseline is None:
        return []
    ratio = formatting.MISSING if baseline["ratio"] is None else f"{baseline['ratio']:.2f}x"
    return [
        f"Baseline ({baseline['kind']} at {money(baseline['price'], cur)}): the same work would cost "
        f"{money(baseline['cost'], cur)}; this window cost {ratio} that.",
        "",
    ]


def _impossible_lines(impossible: Sequence[Mapping[str, Any]]) -> list[str]:
    if not impossible:
        return []
    rows = [
        [
            f"{escape(j['namespace'])}/{escape(j['name'])}",
            escape(j["pool"]),
            formatting.number(j["gpus"]),
            formatting.timestamp(j["start"]),
            formatting.timestamp(j["end"]),
            escape(j["why"]),
        ]
        for j in impossible
    ]
    return [
        "",
        "## Impossible records (listed, not priced)",
        "",
        *_table(["job", "pool", "GPUs", "start", "end", "why"], rows),
    ]


def markdown(doc: Mapping[str, Any]) -> str:
    """cost.md: the terms of the formula, the pools, the jobs, and links to the charts."""
    cur, window = escape_text(doc["currency"]), doc["window"]
    terms = doc["terms"]
    lines = [
        "# gpurack cost",
        "",
        f"{formatting.timestamp(window['since'])} to {formatting.timestamp(window['until'])} "
        f"({formatting.duration(window['hours'] * 3600)}); allocations from {', '.join(doc['sources'])}.",
        "",
        *(f"- Window clipped: {escape(note)}." for note in window["clipped"]),
        *([""] if window["clipped"] else []),
        f"**{escape(summary_line(doc))}**",
        "",
        "`effective_cost = (compute + network + storage + support + idle + failed_runs + operations)"
        " / accepted_units`",
        "",
        *_table(
            ["term", "cost"],
            [[name, money(terms[name], cur)] for name in TERMS]
            + [
                ["**total**", f"**{money(terms['total'], cur)}**"],
                ["accepted units", formatting.number(doc["accepted_units"])],
            ],
        ),
        "",
    ]
    lines += _baseline_lines(doc["baseline"], cur)
    lines += [
        "## Pools",
        "",
        *_table(POOL_HEAD, [_pool_row(p, cur) for p in doc["pools"]]),
        "",
        "## Jobs",
        "",
    ]
    if doc["jobs"]:
        lines += _table(JOB_HEAD, [_job_row(j) for j in doc["jobs"]])
    else:
        lines.append("No GPU allocation in this window.")
    lines += _impossible_lines(doc["impossible"])
    for key, title in (("queue", "Queue wait per job"), ("allocation", "GPUs allocated per pool")):
        lines += ["", f"![{title}]({CHARTS[key]})"]
    lines.append("")
    return "\n".join(lines)


def _data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def html_page(doc: Mapping[str, Any]) -> str:
    """cost.html: the same tables, and the charts as images inside the page."""
    env = environment()
    context = {
        "doc": doc,
        "terms": TERMS,
        "summary_line": summary_line(doc),
        "charts": {key: _data_uri(svg) for key, svg in chart_svgs(doc).items()},
        "money": lambda amount: money(amount, doc["currency"]),
        "number": formatting.number,
        "when": formatting.timestamp,
        "duration": formatting.duration,
    }
    return env.get_template(TEMPLATE).render(context)


def documents(doc: Mapping[str, Any], formats: Sequence[str]) -> dict[str, str]:
    """The file names and texts for `formats` (md also brings the charts it links)."""
    texts: dict[str, str] = {}
    if "json" in formats:
        # allow_nan=False: NaN and Infinity are not JSON; the inputs refuse them, and this says so loudly.
        texts[FILES["json"]] = json.dumps(doc, indent=2, allow_nan=False) + "\n"
    if "md" in formats:
        texts[FILES["md"]] = markdown(doc)
        texts.update({CHARTS[key]: svg for key, svg in chart_svgs(doc).items()})
    if "html" in formats:
        texts[FILES["html"]] = html_page(doc)
    return texts


def write(doc: Mapping[str, Any], folder: Path, formats: Sequence[str], *, force: bool = False) -> list[Path]:
    """Write the files of `formats` into `folder` (each whole or not at all); return their paths.

    Raises:
        UsageError: a file exists and `force` is off, or the folder or a file cannot be written.
    """
    texts = {folder / name: text for name, text in documents(doc, formats).items()}
    return outfile.write_texts(texts, force=force)
