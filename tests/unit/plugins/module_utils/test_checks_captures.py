"""Quick-tier checks over the real captures and degraded copies of them."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu import gather_gpu
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi_text import (
    parse_nvidia_smi_text,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nic import gather_nic
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.numa import gather_numa
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nvme import gather_nvme
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.os import gather_os
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci import (
    gather_pci,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureSource
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import summarise

from .check_builders import (
    failing,
    run_checks,
)

H200X1_EXPECT: dict[str, Any] = {
    "gpu": {"count": 1, "model": "NVIDIA H200", "min_memory_mib": 140000, "pcie": {"gen": 5, "width": 16}},
    "numa_nodes": 1,
}


def _writable_copy(src: Path, tmp_path: Path) -> Path:
    dest = tmp_path / src.name
    shutil.copytree(src, dest, copy_function=shutil.copyfile)
    for path in [dest, *dest.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return dest


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1))


def _capture_facts(root: Path) -> dict[str, Any]:
    source = CaptureSource(root)
    return {
        "gpurack_gpu": gather_gpu(source),
        "gpurack_pci": gather_pci(source),
        "gpurack_numa": gather_numa(source),
        "gpurack_nic": gather_nic(source),
        "gpurack_nvme": gather_nvme(source),
        "gpurack_os": gather_os(source),
    }


def test_h200x1_capture_passes_a_matching_expectation(h200x1: Path) -> None:
    results = run_checks(_capture_facts(h200x1), H200X1_EXPECT)
    assert not failing(results), failing(results)
    passed = {r["id"] for r in results if r["verdict"] == "pass"}
    assert {"gpu.count", "gpu.model", "gpu.memory", "gpu.pcie.expected", "numa.nodes", "gpu.xid"} <= passed
    assert summarise(results)["verdict"] == "pass"


def test_h200x1_capture_degraded_copy_fails_with_the_right_remediation(h200x1: Path, tmp_path: Path) -> None:
    root = _writable_copy(h200x1, tmp_path)
    _edit(
        root / "nvidia-smi-q.xml",
        "<current_link_width>16x</current_link_width>",
        "<current_link_width>8x</current_link_width>",
    )
    _edit(
        root / "nvidia-smi-q.xml",
        "<remapped_row_pending>No</remapped_row_pending>",
        "<remapped_row_pending>Yes</remapped_row_pending>",
    )
    _edit(
        root / "nvidia-smi-nvlink-s.txt",
        "# rc=0",
        "GPU 0: NVIDIA H200 (UUID: GPU-cf8daf37-ddce-01b6-79fe-9e7477c494b0)\n"
        "\t Link 0: 26.562 GB/s\n\t Link 1: <inactive>\n# rc=0",
    )
    _edit(
        root / "dmesg-nvrm.txt",
        "# rc=0",
        "[ 4242.000001] NVRM: Xid (PCI:0000:00:06): 79, pid='<unknown>', name=<unknown>, "
        "GPU has fallen off the bus.\n# rc=0",
    )
    bad = {r["id"]: r for r in failing(run_checks(_capture_facts(root), H200X1_EXPECT))}
    assert set(bad) == {
        "gpu.pcie.current_vs_max",
        "gpu.pcie.expected",
        "gpu.remapped_rows.pending",
        "gpu.nvlink.links",
        "gpu.xid",
    }
    assert all(r["component"] == "GPU 0 (0000:00:06.0)" for r in bad.values())
    assert bad["gpu.pcie.current_vs_max"]["measured"] == {"gen": 5, "width": 8}
    assert "reseat the GPU" in bad["gpu.pcie.current_vs_max"]["remediation"]
    assert "reset the GPU" in bad["gpu.remapped_rows.pending"]["remediation"]
    assert bad["gpu.nvlink.links"]["measured"] == {"active": 1, "inactive": [1]}
    assert "GPU has fallen off the bus" in bad["gpu.xid"]["reason"]
    assert "reseat the GPU" in bad["gpu.xid"]["remediation"]


def test_h100x8_text_flags_power_brake_and_passes_its_expectation(public: Path) -> None:
    parsed = parse_nvidia_smi_text((public / "nvidia-smi-q.535.161.08.h100x8").read_text())
    facts = {"gpurack_gpu": {"available": True, "source": "nvidia-smi-text", **parsed}}
    expect = {
        "gpu": {
            "count": 8,
            "model": "NVIDIA H100 80GB HBM3",
            "min_memory_mib": 80000,
            "pcie": {"gen": 5, "width": 16},
        },
        "driver": {"branch": "535"},
    }
    results = run_checks(copy.deepcopy(facts), expect)
    assert not failing(results), failing(results)
    warned = {r["id"] for r in results if r["verdict"] == "warn"}
    assert "gpu.clocks_event_reasons" in warned
