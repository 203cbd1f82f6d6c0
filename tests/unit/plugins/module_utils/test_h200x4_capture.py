"""The real 4x H200 NVLink capture: GPU facts, labels and quick checks."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import run_checks as _run_checks
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu import gather_gpu
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi import (
    parse_nvidia_smi_xml,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi_text import (
    parse_nvidia_smi_text,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.node import gather_all
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureSource
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import node_labels
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import summarise
from conftest import REPO


def run_checks(facts: Any, expect: Any = None, tier: str = "quick") -> list[dict[str, Any]]:
    """run_checks, its CheckResults in their JSON shape (what node_checks returns)."""
    return [r.to_dict() for r in _run_checks(facts, expect, tier)]


H200X4 = REPO / "tests" / "fixtures" / "captures" / "h200x4"
POOL = {"name": "h200-train-a", "workload": "distributed-training", "sharing": "full-gpu"}
EXPECT = {
    "gpu": {
        "count": 4,
        "model": "NVIDIA H200",
        "min_memory_mib": 140000,
        "pcie": {"gen": 5, "width": 16},
        "nvlinks_per_gpu": 18,
    }
}


def _body(name: str) -> str:
    lines = (H200X4 / name).read_text().splitlines()
    return "\n".join(lines[1:-1]) + "\n"  # strip the capture frame


def test_gather_gpu_h200x4_reads_18_active_nvlinks_per_gpu() -> None:
    gpu = gather_gpu(CaptureSource(H200X4))
    assert gpu["count"] == 4
    assert [g["bus_id"] for g in gpu["gpus"]] == [
        "0000:00:06.0",
        "0000:00:07.0",
        "0000:00:08.0",
        "0000:00:09.0",
    ]
    for g in gpu["gpus"]:
        assert len(g["nvlinks"]) == 18
        assert {(link["active"], link["speed_gbps"]) for link in g["nvlinks"]} == {(True, 26.562)}
    assert gpu["topology"]["links"]["GPU0"] == {"GPU1": "NV18", "GPU2": "NV18", "GPU3": "NV18"}
    assert gpu["nvswitch"] is True


def test_parse_nvidia_smi_h200x4_xml_and_text_agree() -> None:
    xml = parse_nvidia_smi_xml(_body("nvidia-smi-q.xml"))
    text = parse_nvidia_smi_text(_body("nvidia-smi-q.txt"))
    assert xml["gpus"] == text["gpus"]
    assert [g["serial"] for g in xml["gpus"]] == [
        "1653724065480",
        "1653724032782",
        "1653724066154",
        "1653724065336",
    ]


def test_node_labels_h200x4_is_4gpu_sxm_nvlink() -> None:
    labels = node_labels(gather_all(CaptureSource(H200X4)), POOL)
    assert labels["gpurack.io/accelerator"] == "h200-141gb"
    assert labels["gpurack.io/topology"] == "4gpu-sxm-nvlink"


def test_run_checks_h200x4_passes_an_nvlink_pool() -> None:
    results = run_checks(gather_all(CaptureSource(H200X4)), EXPECT)
    nvlink = [r for r in results if r["id"] == "gpu.nvlink.links"]
    assert [r["verdict"] for r in nvlink] == ["pass"] * 4
    assert summarise(results)["verdict"] == "pass"


def test_run_checks_h200x4_inactive_link_fails_that_gpu(tmp_path: Path) -> None:
    copy = tmp_path / "h200x4"
    shutil.copytree(H200X4, copy)
    status = copy / "nvidia-smi-nvlink-s.txt"
    text = status.read_text()
    # Edit: GPU 2's link 7 goes down, printed the way nvidia-smi shows an inactive link.
    gpu2 = text.index("GPU 2:")
    link7 = text.index("Link 7: 26.562 GB/s", gpu2)
    status.write_text(text[:link7] + "Link 7: <inactive>" + text[link7 + len("Link 7: 26.562 GB/s") :])
    results = run_checks(gather_all(CaptureSource(copy)), EXPECT)
    failing = [r for r in results if r["verdict"] == "fail"]
    assert [(r["id"], r["component"]) for r in failing] == [("gpu.nvlink.links", "GPU 2 (0000:00:08.0)")]
    assert failing[0]["remediation"]
