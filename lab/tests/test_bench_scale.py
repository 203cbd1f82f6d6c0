"""The scale benchmark's table and plot from given figures (no Docker, no lab)."""

from __future__ import annotations

import importlib
import struct
import subprocess
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _bench(name: str) -> ModuleType:
    """A script of lab/benchmarks as a module (they import each other by name)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    return importlib.import_module(name)


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk, after checking the signature."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    length, kind = struct.unpack(">I4s", data[8:16])
    assert (length, kind) == (13, b"IHDR")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_table_gives_per_host_per_extra_host_and_rerun_ratios() -> None:
    scale = _bench("bench_scale")
    sizes = [scale.Size(1, 4.5, 3.0, 1), scale.Size(10, 16.0, 8.0, 10), scale.Size(100, 150.0, None, 99)]
    header, rule, *rows = scale.table(sizes, "20")
    assert "forks 20" in header and "re-run / first" in header and "per extra host" in header
    assert rule.count("|") == header.count("|")
    assert rows == [
        "| 1 | 1 | 4.5 s | 3.0 s | 0.67 | 4.50 s | - |",
        "| 10 | 10 | 16.0 s | 8.0 s | 0.50 | 1.60 s | 1.28 s |",
        "| 100 | 99 | 150.0 s | - | - | 1.50 s | 1.47 s |",
    ]


def test_the_plot_is_a_png_of_the_figures_size(tmp_path: Path) -> None:
    plot = _bench("bench_plot")
    first = [(1, 4.5), (10, 16.0), (50, 76.8), (100, 149.8)]
    rerun = [(1, 3.1), (10, 9.0), (50, 40.2), (100, 80.0)]
    path = plot.plot_scale(tmp_path / "out" / "scale.png", first, rerun, title="preflight on light hosts")
    assert path == tmp_path / "out" / "scale.png"
    assert _png_size(path) == (1100, 480)  # figsize 11 x 4.8 inches at 100 dpi
    assert 20_000 < path.stat().st_size < 1_000_000


def test_a_plot_without_reruns_is_drawn_too(tmp_path: Path) -> None:
    path = _bench("bench_plot").plot_scale(tmp_path / "one.png", [(10, 23.1)], title="smoke")
    assert _png_size(path) == (1100, 480)


def _fleet(ready: int, cold_changed: int, warm_patches: int) -> object:
    """A fleet's figures as bench_kwok.sync_fleet returns them."""
    cold = {"changed_nodes": [f"lab-l{i}" for i in range(cold_changed)], "failed_nodes": [], "patches": 101}
    warm = {"changed_nodes": [], "failed_nodes": [], "patches": warm_patches}
    return _bench("bench_kwok").Fleet(0.5, 1.0, ready, {"cold": (3.7, cold), "warm": (4.0, warm)})


def test_the_smoke_fails_on_what_the_fleet_did_never_on_its_time() -> None:
    smoke = _bench("bench_scale_smoke")
    assert smoke.fleet_failures(_fleet(100, 100, 0), 100) == []
    assert smoke.fleet_failures(_fleet(99, 98, 2), 100) == [
        "kwok: Ready 99, not 100",
        "kwok: changed cold 98, not 100",
        "kwok: patches warm 2, not 0",
    ]


def test_only_drawing_imports_matplotlib() -> None:
    probe = "import sys, bench_scale, bench_scale_smoke; print('matplotlib' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=BENCHMARKS, capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "False"
