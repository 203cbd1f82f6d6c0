"""numa facts: the real H200 capture, nested lscpu output, edited copies."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.numa import (
    count_cpulist,
    gather_numa,
    parse_lscpu_json,
    parse_node_meminfo,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureSource
from conftest import H200X1


def _copy_capture(tmp_path: Path) -> Path:
    copy = tmp_path / "h200x1"
    shutil.copytree(H200X1, copy, copy_function=shutil.copyfile)
    # The shared captures are read-only (copytree keeps directory modes); make the copy editable.
    for path in [copy, *copy.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return copy


def test_gather_numa_h200x1_reports_one_node_of_sixteen_cpus() -> None:
    facts = gather_numa(CaptureSource(H200X1))
    assert facts["available"] is True
    assert facts["count"] == 1
    assert facts["nodes"] == [{"id": 0, "cpulist": "0-15", "cpus": 16, "mem_total_kib": 4550128}]
    assert facts["cpu"] == {
        "model": "Intel(R) Xeon(R) Processor",
        "sockets": 1,
        "cores_per_socket": 16,
        "threads_per_core": 1,
        "cpus": 16,
    }
    assert facts["sources"] == ["sys/devices/system/node", "lscpu -J"]


@pytest.mark.parametrize(
    ("cpulist", "expected"),
    [("0-15\n", 16), ("0-15,32-47", 32), ("3", 1), ("0,2,4-5", 4), ("", 0), ("\n", 0)],
)
def test_count_cpulist_ranges_sum_to_cpu_count(cpulist: str, expected: int) -> None:
    assert count_cpulist(cpulist) == expected


@pytest.mark.parametrize("cpulist", ["0-x", "5-3", "0;1"])
def test_count_cpulist_malformed_raises(cpulist: str) -> None:
    with pytest.raises(FactsError, match="cpulist"):
        count_cpulist(cpulist)


def test_parse_lscpu_json_nested_children_are_flattened() -> None:
    # Synthetic: util-linux >= 2.38 nests fields under "children" (this models 2.39's layout).
    doc = {
        "lscpu": [
            {"field": "Architecture:", "data": "x86_64"},
            {"field": "CPU(s):", "data": "224"},
            {
                "field": "Vendor ID:",
                "data": "GenuineIntel",
                "children": [
                    {
                        "field": "Model name:",
                        "data": "Intel(R) Xeon(R) Platinum 8480+",
                        "children": [
                            {"field": "Thread(s) per core:", "data": "2"},
                            {"field": "Core(s) per socket:", "data": "56"},
                            {"field": "Socket(s):", "data": "2"},
                        ],
                    }
                ],
            },
        ]
    }
    assert parse_lscpu_json(json.dumps(doc)) == {
        "model": "Intel(R) Xeon(R) Platinum 8480+",
        "sockets": 2,
        "cores_per_socket": 56,
        "threads_per_core": 2,
        "cpus": 224,
    }


def test_parse_lscpu_json_dash_value_is_null() -> None:
    # arm64 lscpu prints "Socket(s): -" when firmware does not say.
    doc = {"lscpu": [{"field": "Socket(s):", "data": "-"}, {"field": "CPU(s):", "data": "72"}]}
    cpu = parse_lscpu_json(json.dumps(doc))
    assert cpu["sockets"] is None
    assert cpu["cpus"] == 72
    assert cpu["model"] is None


def test_parse_lscpu_json_invalid_json_raises() -> None:
    with pytest.raises(FactsError, match=r"lscpu -J: invalid JSON"):
        parse_lscpu_json('{"lscpu": [')


def test_parse_node_meminfo_reads_memtotal() -> None:
    text = (H200X1 / "sys/devices/system/node/node0/meminfo").read_text()
    assert parse_node_meminfo(text) == 4550128


def test_gather_numa_meminfo_without_memtotal_raises(tmp_path: Path) -> None:
    copy = _copy_capture(tmp_path)
    meminfo = copy / "sys/devices/system/node/node0/meminfo"
    # Edit: drop the "Node 0 MemTotal:" line (a truncated read).
    meminfo.write_text("".join(ln for ln in meminfo.read_text().splitlines(True) if "MemTotal" not in ln))
    with pytest.raises(FactsError, match=r"node0/meminfo: no 'Node N MemTotal"):
        gather_numa(CaptureSource(copy))


def test_gather_numa_lscpu_missing_gives_null_cpu(tmp_path: Path) -> None:
    copy = _copy_capture(tmp_path)
    # Edit: the capture says lscpu was not installed.
    (copy / "lscpu.json").write_text("# $ lscpu -J\nsh: lscpu: command not found\n# rc=127\n")
    facts = gather_numa(CaptureSource(copy))
    assert facts["cpu"] is None
    assert facts["count"] == 1


def test_gather_numa_without_node_dirs_is_unavailable(tmp_path: Path) -> None:
    copy = _copy_capture(tmp_path)
    # Edit: remove the node tree (kernel built without NUMA).
    shutil.rmtree(copy / "sys/devices/system/node")
    facts = gather_numa(CaptureSource(copy))
    assert facts["available"] is False
    assert facts["count"] is None
    assert "no node* entries" in facts["reason"]
    assert facts["cpu"]["cpus"] == 16
