"""The scale benchmark's plot: preflight wall time against the number of hosts, and the cost per
host, as a PNG (matplotlib's Agg backend, imported only here and only when drawing)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

# (hosts, seconds) per run: the first run, and the re-run when there is one.
Points = Sequence[tuple[int, float]]


def plot_scale(path: Path, first: Points, rerun: Points = (), *, title: str) -> Path:
    """Draw wall time against hosts (left) and seconds per host (right), each point labelled
    with its value, into the PNG at `path`; return the path."""
    import matplotlib  # noqa: PLC0415 - only a plot pays for matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot  # noqa: PLC0415

    figure, (wall, per_host) = pyplot.subplots(1, 2, figsize=(11, 4.8), dpi=100)
    series = (("first run", first, "o"), ("re-run", rerun, "s"))
    for index, (label, points, marker) in enumerate(series):
        if not points:
            continue
        other = dict(series[1 - index][1])
        hosts = [n for n, _ in points]
        wall.plot(hosts, [t for _, t in points], marker=marker, label=f"{label}: {_per_extra_host(points)}")
        per_host.plot(hosts, [t / n for n, t in points], marker=marker, label=label)
        for n, took in points:
            # the higher of the two runs at this N labelled above its point, the lower below
            offset = (4, 7) if took >= other.get(n, 0.0) else (4, -13)
            for axes, value, text in (
                (wall, took, f"{took:.1f} s"),
                (per_host, took / n, f"{took / n:.2f} s"),
            ):
                axes.annotate(text, (n, value), textcoords="offset points", xytext=offset, fontsize=8)
    wall.set(title="wall time", xlabel="hosts (N)", ylabel="preflight wall time (s)")
    per_host.set(title="cost per host", xlabel="hosts (N)", ylabel="wall time / N (s per host)")
    measured = sorted({n for n, _ in [*first, *rerun]})
    for axes in (wall, per_host):
        axes.set_xticks(measured)  # a tick at each N measured
        axes.set_xlim(0, measured[-1] * 1.15)  # room for the last point's label
        axes.set_ylim(0, axes.get_ylim()[1] * 1.12)
        axes.grid(alpha=0.3)
        axes.legend(loc="best", fontsize=9)
    figure.suptitle(title)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")
    pyplot.close(figure)
    return path


def _per_extra_host(points: Points) -> str:
    """The cost per extra host from the smallest to the largest N, for the legend."""
    (n0, t0), (n1, t1) = min(points), max(points)
    return f"{(t1 - t0) / (n1 - n0):.2f} s per extra host" if n1 > n0 else f"{t0 / n0:.2f} s per host"
