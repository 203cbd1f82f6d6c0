"""gpurack_lab.gfd: GPU feature discovery's labels beside gpurack's GPU facts of the same GPU."""

from __future__ import annotations

from pathlib import Path

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import CaptureSource, gather_gpu
from gpurack_lab.gfd import compare, parse_labels

# What GFD v0.18.1 writes for one H200 with driver 580.159.04 (its nvml labeler's keys).
GFD_H200 = """nvidia.com/cuda.driver-version.full=580.159.04
nvidia.com/cuda.runtime-version.full=13.0
nvidia.com/gpu.count=1
nvidia.com/gpu.family=hopper
nvidia.com/gpu.memory=143771
nvidia.com/gpu.product=NVIDIA-H200
nvidia.com/gpu.compute.major=9
"""


def test_gfd_and_gpurack_agree_on_every_figure_of_the_h200_capture(h200x1: Path) -> None:
    rows = compare(parse_labels(GFD_H200), gather_gpu(CaptureSource(h200x1)))
    assert [r.what for r in rows] == [
        "GPU count",
        "GPU model (gpurack.io/accelerator)",
        "GPU memory (MiB)",
        "driver",
        "CUDA (driver API)",
        "GPU family",
    ]
    assert [(r.gfd, r.gpurack) for r in rows if not r.agrees] == []
    assert rows[1].gpurack == "h200-141gb"


def test_a_figure_that_differs_is_reported_as_a_disagreement(h200x1: Path) -> None:
    other = GFD_H200.replace("gpu.count=1", "gpu.count=2").replace("=NVIDIA-H200", "=NVIDIA-H100-80GB-HBM3")
    rows = {r.what: r for r in compare(parse_labels(other), gather_gpu(CaptureSource(h200x1)))}
    assert not rows["GPU count"].agrees and (rows["GPU count"].gfd, rows["GPU count"].gpurack) == ("2", "1")
    assert not rows["GPU model (gpurack.io/accelerator)"].agrees


def test_lines_without_a_key_are_ignored() -> None:
    assert parse_labels("\n# comment\nnvidia.com/gpu.count=1\n=x\n") == {"nvidia.com/gpu.count": "1"}
