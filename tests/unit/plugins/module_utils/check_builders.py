"""Hand-built facts (docs/facts.md) and helpers the quick-tier check tests share."""

from __future__ import annotations

from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import run_checks as _run_checks
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.registry import (
    FUNCTIONS,
    specs,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult

CATALOGUE = specs()
REGISTRY = FUNCTIONS


def run_checks(facts: Any, expect: Any = None, tier: str = "quick", pool: Any = None) -> list[dict[str, Any]]:
    """run_checks, its CheckResults in their JSON shape (what node_checks returns)."""
    results = _run_checks(facts, expect, tier, pool)
    assert all(isinstance(r, CheckResult) for r in results)
    return [r.to_dict() for r in results]


RESULT_KEYS = {
    "id",
    "title",
    "tier",
    "component",
    "verdict",
    "measured",
    "expected",
    "unit",
    "reason",
    "remediation",
    "evidence",
    "limit_source",
    "percent",
    "duration_s",
    "details",
}


def gpu(index: int = 0, **over: Any) -> dict[str, Any]:
    """One healthy H200 SXM as gpu_facts reports it; keyword arguments replace fields."""
    entry: dict[str, Any] = {
        "index": index,
        "name": "NVIDIA H200",
        "architecture": "Hopper",
        "uuid": f"GPU-{index:08d}",
        "serial": f"16549240642{index:02d}",
        "bus_id": f"0000:{0x19 + 0x10 * index:02x}:00.0",
        "pci_device_id": "0x2335",
        "vbios": "96.00.A5.00.1E",
        "memory_total_mib": 143771,
        "pcie": {
            "gen_current": 5,
            "gen_max": 5,
            "gen_max_device": 5,
            "gen_max_host": 5,
            "width_current": 16,
            "width_max": 16,
        },
        "persistence_mode": True,
        "mig_mode": False,
        "mig_mode_pending": False,
        "ecc_mode": True,
        "ecc_errors": {
            "volatile_corrected": 0,
            "volatile_uncorrected": 0,
            "aggregate_corrected": 0,
            "aggregate_uncorrected": 0,
        },
        "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False},
        "retired_pages": {"single_bit": None, "double_bit": None, "pending": None},
        "recovery_action": "None",
        "clocks_event_reasons": ["idle"],
        "nvlinks": [{"link": n, "speed_gbps": 26.562, "active": True} for n in range(18)],
        "nvlink_source": "nvidia-smi nvlink -s",
        "numa_node": 0 if index < 4 else 1,
        "cpu_affinity": "0-55" if index < 4 else "56-111",
    }
    entry.update(over)
    return entry


def port(n: int, **over: Any) -> dict[str, Any]:
    """One healthy 400G InfiniBand port `mlx5_<n> port 1`."""
    entry: dict[str, Any] = {
        "device": f"mlx5_{n}",
        "port": 1,
        "state": "ACTIVE",
        "phys_state": "LinkUp",
        "rate_gbps": 400,
        "link_layer": "InfiniBand",
        "fw_ver": "28.41.1000",
        "board_id": "MT_0000000838",
        "hca_type": "MT4129",
        "node_guid": None,
        "port_guid": None,
        "numa_node": 0 if n < 4 else 1,
        "counters": {"symbol_error": 0},
    }
    entry.update(over)
    return entry


def node(gpus: int = 8, ports: int = 8) -> dict[str, Any]:
    """Facts of a healthy 8x H200 HGX node with 8 IB ports, as the facts modules return them."""
    return {
        "gpurack_gpu": {
            "available": True,
            "source": "nvidia-smi-xml",
            "sources": ["nvidia-smi -q -x"],
            "driver_version": "580.159.04",
            "cuda_version": "13.0",
            "count": gpus,
            "nvidia_smi_count": gpus,
            "gpus": [gpu(i) for i in range(gpus)],
            "topology": None,
            "nvswitch": gpus > 1,
        },
        "gpurack_pci": {
            "available": True,
            "source": "lspci-vvv",
            "devices": [
                {
                    "bus_id": gpu(i)["bus_id"],
                    "description": "3D controller: NVIDIA Corporation Device 2335",
                    "vendor_id": "0x10de",
                    "device_id": "0x2335",
                    "class_id": "0x0302",
                    "numa_node": 0,
                    "link": None,
                }
                for i in range(gpus)
            ],
            "downgraded": [],
        },
        "gpurack_numa": {"available": True, "count": 2, "nodes": [{"id": 0, "cpulist": "0-55"}, {"id": 1}]},
        "gpurack_nic": {
            "available": True,
            "net": [{"name": "eth0"}],
            "rdma": [port(n) for n in range(ports)],
        },
        "gpurack_nvme": {
            "available": True,
            "source": "nvme-list",
            "disks": [{"name": f"nvme{n}n1", "is_os_disk": n == 0} for n in range(9)],
        },
        "gpurack_os": {
            "kernel": "6.8.0",
            "cgroup_version": 2,
            "modules": {"nouveau": False, "nvidia": True},
            "xid_events": [],
            "services": {"nvidia-fabricmanager": "active"},
        },
    }


EXPECT: dict[str, Any] = {
    "gpu": {
        "count": 8,
        "model": "NVIDIA H200",
        "min_memory_mib": 140000,
        "pcie": {"gen": 5, "width": 16},
        "nvlinks_per_gpu": 18,
    },
    "rdma": {"ports": 8, "rate_gbps": 400, "link_layer": "InfiniBand"},
    "numa_nodes": 2,
    "nvme": {"count": 8},
    "driver": {"branch": "580"},
    "cuda": {"version": "12.8"},
    "os": {"cgroup_version": 2},
}


# The node's pool (gpurack_pool): whole GPUs, so MIG must be off.
POOL: dict[str, Any] = {"name": "h200-train", "workload": "distributed-training", "sharing": "full-gpu"}


def by_id(results: list[dict[str, Any]], check_id: str) -> list[dict[str, Any]]:
    return [r for r in results if r["id"] == check_id]


def failing(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in results if r["verdict"] == "fail"]
