"""Small SVG charts for the cost report, written by hand (no plotting library in the driver):
horizontal bars (one per job: its queue wait) and step lines over time (GPUs allocated per pool
against its capacity). Every text goes through `escape`; the charts are plain files that a
browser, a Markdown viewer or an image viewer shows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape

WIDTH = 760
FONT = 'font-family="system-ui, sans-serif" font-size="12"'
TITLE_FONT = 'font-family="system-ui, sans-serif" font-size="14" font-weight="600"'
# One colour per series, in order; the outcomes' colours match report.css's verdict colours.
PALETTE = ("#0550ae", "#b26a00", "#6639ba", "#1a7f37", "#cf222e", "#57606a")
OUTCOME_COLOURS = {"accepted": "#2e7d32", "failed": "#c62828", "other": "#6e7781"}


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    value: float
    kind: str  # a key of OUTCOME_COLOURS


def nice_ticks(high: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least `high` (1, 2 or 5 times a power of ten apart)."""
    if high <= 0:
        return [0.0, 1.0]
    raw = high / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [i * step for i in range(math.ceil(high / step - 1e-9) + 1)]


def _number(x: float) -> str:
    return f"{x:g}" if x < 10_000 else f"{x:,.0f}"


def _svg(height: int, title: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(title)}">\n'
        f"<title>{escape(title)}</title>\n"
        f'<rect width="{WIDTH}" height="{height}" fill="#fff"/>\n'
        f'<text x="10" y="20" {TITLE_FONT}>{escape(title)}</text>\n' + "\n".join(body) + "\n</svg>\n"
    )


def bars(title: str, unit: str, items: Sequence[Bar]) -> str:
    """A horizontal bar per item, labelled on the left, its value at its end."""
    left, right, top, row = 230, 70, 40, 22
    height = top + max(len(items), 1) * row + 40
    items = [Bar(b.label, max(b.value, 0.0), b.kind) for b in items]
    ticks = nice_ticks(max((b.value for b in items), default=0.0))
    scale = (WIDTH - left - right) / ticks[-1]
    body = []
    for tick in ticks:
        x = left + tick * scale
        body.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{height - 34}" stroke="#d0d7de"/>')
        body.append(f'<text x="{x:.1f}" y="{height - 20}" text-anchor="middle" {FONT}>{_number(tick)}</text>')
    body.append(f'<text x="{WIDTH - right}" y="{height - 6}" text-anchor="end" {FONT}>{escape(unit)}</text>')
    if not items:
        body.append(f'<text x="{left}" y="{top + 14}" {FONT} fill="#59636e">nothing in this window</text>')
    for i, item in enumerate(items):
        y = top + i * row
        width = max(item.value * scale, 1.0)  # a wait of 0 (or a clock skew below it) still shows
        colour = OUTCOME_COLOURS.get(item.kind, PALETTE[0])
        label = item.label if len(item.label) <= 34 else item.label[:33] + "…"
        body.append(f'<text x="{left - 8}" y="{y + 14}" text-anchor="end" {FONT}>{escape(label)}</text>')
        body.append(f'<rect x="{left}" y="{y + 3}" width="{width:.1f}" height="{row - 8}" fill="{colour}"/>')
        body.append(
            f'<text x="{left + width + 5:.1f}" y="{y + 14}" {FONT}>{_number(round(item.value, 1))}</text>'
        )
    legend = [f"{kind}" for kind in OUTCOME_COLOURS if any(b.kind == kind for b in items)]
    for i, kind in enumerate(legend):
        x = 10 + i * 90
        body.append(
            f'<rect x="{x}" y="{height - 16}" width="10" height="10" fill="{OUTCOME_COLOURS[kind]}"/>'
        )
        body.append(f'<text x="{x + 14}" y="{height - 7}" {FONT}>{escape(kind)}</text>')
    return _svg(height, title, body)


def _time_label(moment: datetime, span_s: float) -> str:
    return moment.strftime("%H:%M:%S" if span_s <= 600 else "%H:%M" if span_s <= 86_400 else "%m-%d %H:%M")


def _step_path(
    points: Sequence[tuple[datetime, float]],
    until: datetime,
    x_of: Callable[[datetime], float],
    y_of: Callable[[float], float],
    colour: str,
) -> str:
    """One series as an SVG path: each point's level holds until the next point, the last until `until`."""
    path, level = [f"M{x_of(points[0][0]):.1f},{y_of(points[0][1]):.1f}"], points[0][1]
    for moment, value in points[1:]:
        path.append(f"H{x_of(moment):.1f}V{y_of(value):.1f}")
        level = value
    path.append(f"H{x_of(until):.1f}V{y_of(level):.1f}")
    return f'<path d="{"".join(path)}" fill="none" stroke="{colour}" stroke-width="2"/>'


def steps(
    title: str,
    since: datetime,
    until: datetime,
    series: Mapping[str, Sequence[tuple[datetime, float]]],
    ceilings: Mapping[str, float],
) -> str:
    """A step line per series over [since, until] (each point holds until the next), and each
    series' ceiling (its capacity) dashed in the same colour."""
    left, right, top, bottom = 60, 20, 52, 60
    height = 300
    span = max((until - since).total_seconds(), 1.0)
    high = max([*ceilings.values(), *(v for points in series.values() for _, v in points), 1.0])
    ticks = nice_ticks(high)
    plot_w, plot_h = WIDTH - left - right, height - top - bottom

    def x_of(moment: datetime) -> float:
        return left + min(max((moment - since).total_seconds() / span, 0.0), 1.0) * plot_w

    def y_of(value: float) -> float:
        return top + plot_h - value / ticks[-1] * plot_h

    body = []
    for tick in ticks:
        y = y_of(tick)
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{WIDTH - right}" y2="{y:.1f}" stroke="#d0d7de"/>')
        body.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" {FONT}>{_number(tick)}</text>')
    for i in range(5):
        moment = since + (until - since) * (i / 4)
        x = x_of(moment)
        anchor = "start" if i == 0 else "end" if i == 4 else "middle"
        label = escape(_time_label(moment, span))
        body.append(f'<text x="{x:.1f}" y="{top + plot_h + 18}" text-anchor="{anchor}" {FONT}>{label}</text>')
    body.append(f'<text x="{left - 6}" y="{top - 16}" text-anchor="end" {FONT} fill="#59636e">GPUs</text>')
    names = sorted(set(series) | set(ceilings))
    for i, name in enumerate(names):
        colour = PALETTE[i % len(PALETTE)]
        if name in ceilings:
            y = y_of(ceilings[name])
            body.append(
                f'<line x1="{left}" y1="{y:.1f}" x2="{WIDTH - right}" y2="{y:.1f}" stroke="{colour}" '
                'stroke-dasharray="5 4" stroke-width="1.5"/>'
            )
        points = list(series.get(name, ()))
        if points:
            body.append(_step_path(points, until, x_of, y_of, colour))
        lx, ly = left + (i % 3) * 230, height - 22 + (i // 3) * 14
        body.append(f'<rect x="{lx}" y="{ly - 9}" width="10" height="10" fill="{colour}"/>')
        body.append(f'<text x="{lx + 14}" y="{ly}" {FONT}>{escape(name)} (dashed: capacity)</text>')
    return _svg(height + 14 * ((len(names) - 1) // 3), title, body)
