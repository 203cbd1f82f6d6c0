"""nvidia-smi topo -m and nvlink -s parsing, over the H200 capture and synthetic HGX output."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_topology import (
    parse_nvlink_status,
    parse_topo_matrix,
)

from .gpu_facts_inputs import (
    GPUS8,
    capture_text,
    hgx_nvlink,
    hgx_topo,
)

# --- nvidia-smi topo -m --------------------------------------------------------------------


def test_parse_topo_matrix_h200x1_strips_ansi_and_reads_affinity(h200x1: Path) -> None:
    topo = parse_topo_matrix(capture_text(h200x1, "nvidia-smi-topo-m.txt"))
    assert topo == {
        "gpus": ["GPU0"],
        "links": {"GPU0": {}},
        "nics": [],
        "nic_names": {},
        "affinity": {"GPU0": {"cpu_affinity": "0-15", "numa_node": 0}},
    }


def test_parse_topo_matrix_hgx_reads_nv18_mesh_and_nics() -> None:
    topo = parse_topo_matrix(hgx_topo())
    assert topo["gpus"] == GPUS8
    assert topo["nics"] == ["NIC0", "NIC1"]
    assert topo["nic_names"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    assert all(topo["links"][a][b] == "NV18" for a in GPUS8 for b in GPUS8 if a != b)
    assert "GPU0" not in topo["links"]["GPU0"]  # X (self) omitted
    assert topo["links"]["GPU0"]["NIC0"] == "PIX"
    assert topo["links"]["GPU7"]["NIC0"] == "SYS"
    assert topo["links"]["NIC1"] == {
        **{g: "SYS" for g in GPUS8[:4]},
        **{g: "PIX" for g in GPUS8[4:]},
        "NIC0": "SYS",
    }
    assert topo["affinity"]["GPU0"] == {"cpu_affinity": "0-55,112-167", "numa_node": 0}
    assert topo["affinity"]["GPU5"] == {"cpu_affinity": "56-111,168-223", "numa_node": 1}


def test_parse_topo_matrix_missing_row_raises() -> None:
    # Edit: drop the GPU7 row, as a paste cut short would.
    text = "\n".join(line for line in hgx_topo().splitlines() if not line.startswith("GPU7\t"))
    with pytest.raises(FactsError, match=r"nvidia-smi topo -m: no row for GPU7"):
        parse_topo_matrix(text)


def test_parse_topo_matrix_short_row_raises() -> None:
    # Edit: cut the GPU2 row after its fourth column.
    lines = [
        "\t".join(line.split("\t")[:5]) if line.startswith("GPU2\t") else line
        for line in hgx_topo().splitlines()
    ]
    with pytest.raises(FactsError, match="row GPU2 has 4 columns, expected 10"):
        parse_topo_matrix("\n".join(lines))


def test_parse_topo_matrix_no_header_raises() -> None:
    with pytest.raises(FactsError, match="no header row"):
        parse_topo_matrix("Failed to initialize NVML: Driver/library version mismatch\n")


# --- nvidia-smi nvlink -s ------------------------------------------------------------------


def test_parse_nvlink_status_h200x1_empty_means_no_links(h200x1: Path) -> None:
    assert parse_nvlink_status(capture_text(h200x1, "nvidia-smi-nvlink-s.txt")) == {}


def test_parse_nvlink_status_hgx_reads_active_and_inactive_links() -> None:
    links = parse_nvlink_status(hgx_nvlink())
    assert sorted(links) == list(range(8))
    assert all(len(gpu_links) == 18 for gpu_links in links.values())
    assert links[0][0] == {"link": 0, "speed_gbps": 26.562, "active": True}
    assert links[3][16] == {"link": 16, "speed_gbps": None, "active": False}
    assert sum(link["active"] for link in links[3]) == 16


def test_parse_nvlink_status_link_before_gpu_raises() -> None:
    with pytest.raises(FactsError, match="before any 'GPU n:' line"):
        parse_nvlink_status("\t Link 0: 26.562 GB/s\n")


def test_parse_nvlink_status_garbage_line_raises() -> None:
    # Edit: a link line whose rate has been cut off mid-number.
    text = hgx_nvlink().replace("\t Link 5: 26.562 GB/s", "\t Link 5: 26.5", 1)
    with pytest.raises(FactsError, match=r"nvidia-smi nvlink -s: line 7 does not parse"):
        parse_nvlink_status(text)
