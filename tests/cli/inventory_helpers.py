"""Facts for the inventory tests, built from the real H200 capture.

The capture has one GPU and no RDMA ports or NVMe disks, so `hgx_facts()` clones its real
GPU entry into an 8-GPU HGX board (the bus ids of a typical HGX H200) and adds 8 RDMA ports
and 2 NVMe disks in the `gpurack_nic` / `gpurack_nvme` shapes of docs/facts.md.
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.node import gather_all
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureSource

H200X1 = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "hw" / "h200x1"
HGX_BUS_IDS = (
    "0000:18:00.0",
    "0000:2a:00.0",
    "0000:3a:00.0",
    "0000:3b:00.0",
    "0000:9a:00.0",
    "0000:9b:00.0",
    "0000:ba:00.0",
    "0000:db:00.0",
)
REAL_SERIAL = "1654924064277"


@cache
def _captured() -> dict[str, Any]:
    return gather_all(CaptureSource(H200X1))


def capture_facts() -> dict[str, Any]:
    """Every gpurack_* fact of the real 1x H200 capture (a fresh copy to edit)."""
    return copy.deepcopy(_captured())


def hgx_facts() -> dict[str, Any]:
    """An 8x H200 node: the real capture's GPU at 8 bus ids, with 8 RDMA ports and 2 NVMe disks."""
    facts = capture_facts()
    real = facts["gpurack_gpu"]["gpus"][0]
    gpus = []
    for index, bus_id in enumerate(HGX_BUS_IDS):
        gpu = copy.deepcopy(real)
        gpu["index"] = index
        gpu["bus_id"] = bus_id
        gpu["serial"] = str(int(REAL_SERIAL) + index)
        gpu["uuid"] = real["uuid"][:-2] + f"{index:02d}"
        gpus.append(gpu)
    facts["gpurack_gpu"]["gpus"] = gpus
    facts["gpurack_gpu"]["count"] = len(gpus)
    facts["gpurack_nic"]["rdma"] = [
        {
            "device": f"mlx5_{i}",
            "port": 1,
            "state": "ACTIVE",
            "phys_state": "LinkUp",
            "rate_gbps": 400,
            "link_layer": "InfiniBand",
            "fw_ver": "28.41.1000",
            "board_id": "MT_0000000838",
            "hca_type": "MT4129",
            "node_guid": f"0xa088c20300{i:06x}",
            "port_guid": f"0xa088c20300{i:06x}",
            "numa_node": 0 if i < 4 else 1,
            "counters": {"symbol_error": 0, "link_downed": 0},
        }
        for i in range(8)
    ]
    facts["gpurack_nvme"]["disks"] = [
        {
            "name": f"nvme{i}n1",
            "model": "SAMSUNG MZWLR3T8HCLS-00A07",
            "serial": f"S6CKNA0T{i:06d}",
            "firmware": "MPK7525Q",
            "size_bytes": 3840755982336,
            "namespace": 1,
            "is_os_disk": i == 0,
        }
        for i in range(2)
    ]
    return facts


def result(check_id: str, verdict: str, component: str = "gpu", reason: str | None = None) -> dict[str, Any]:
    """A check result dict in the shape the validate engine returns."""
    return {
        "id": check_id,
        "title": check_id.replace(".", " "),
        "tier": "preflight",
        "component": component,
        "verdict": verdict,
        "measured": 8,
        "expected": 8,
        "unit": None,
        "reason": reason,
        "remediation": None,
        "evidence": {"source": "nvidia-smi -q -x", "lines": ["Attached GPUs: 8"]},
        "limit_source": "gpurack_expect",
    }
