"""Inventory benchmark: record N synthetic 8-GPU nodes twice, then diff every one of them.

    .venv/bin/python benchmarks/bench_inventory.py [--nodes 1000] [--gpus 8] [--db URL]

Prints a Markdown table of the figures with their ratios (records/s, run 2 / run 1, per host);
asserts nothing. The second run swaps one GPU on every 50th node and halves a PCIe link on
every 100th, so the diff finds real drift. Every host is diffed twice: in bulk
(`Store.compare_all()`, what `gpurack inventory diff --all` does) and one host at a time
(`Store.diff(host)`, a few sessions per host). Without --db it uses a fresh SQLite file in a
temporary folder.
"""

from __future__ import annotations

import argparse
import copy
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from gpurack.inventory import NodeRecord, RunRecord, open_store

BUS_IDS = ("18", "2a", "3a", "3b", "9a", "9b", "ba", "db", "0c", "1c", "4c", "5c", "8c", "ac", "bc", "cc")
CHECKS = (
    "gpu.count",
    "gpu.model",
    "gpu.memory",
    "gpu.pcie",
    "gpu.ecc",
    "gpu.nvlink",
    "nic.rate",
    "nvme.count",
)


def synthetic_facts(node: int, gpus: int, rng: random.Random) -> dict[str, Any]:
    """One node's facts in the docs/facts.md shapes, shaped like an HGX H200 board."""
    return {
        "gpurack_gpu": {
            "available": True,
            "source": "nvidia-smi-xml",
            "driver_version": "580.159.04",
            "cuda_version": "13.0",
            "count": gpus,
            "gpus": [
                {
                    "index": i,
                    "name": "NVIDIA H200",
                    "architecture": "Hopper",
                    "uuid": f"GPU-{node:08x}-{i:04x}-{rng.getrandbits(16):04x}-0000-000000000000",
                    "serial": str(1654924000000 + node * 16 + i),
                    "bus_id": f"0000:{BUS_IDS[i % len(BUS_IDS)]}:00.0",
                    "pci_device_id": "0x2335",
                    "vbios": "96.00.A5.00.1E",
                    "memory_total_mib": 143771,
                    "pcie": {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16},
                    "persistence_mode": True,
                    "ecc_mode": True,
                    "nvlinks": [{"link": n, "speed_gbps": 26.562, "active": True} for n in range(18)],
                    "numa_node": 0 if i < gpus // 2 else 1,
                }
                for i in range(gpus)
            ],
        },
        "gpurack_nic": {
            "available": True,
            "rdma": [
                {
                    "device": f"mlx5_{i}",
                    "port": 1,
                    "state": "ACTIVE",
                    "phys_state": "LinkUp",
                    "rate_gbps": 400,
                    "link_layer": "InfiniBand",
                    "fw_ver": "28.41.1000",
                    "port_guid": f"0xa088c203{node:06x}{i:02x}",
                }
                for i in range(gpus)
            ],
        },
        "gpurack_nvme": {
            "available": True,
            "disks": [
                {
                    "name": f"nvme{i}n1",
                    "model": "SAMSUNG MZWLR3T8HCLS-00A07",
                    "serial": f"S6CK{node:06d}{i:02d}",
                    "firmware": "MPK7525Q",
                    "size_bytes": 3840755982336,
                }
                for i in range(2)
            ],
        },
        "gpurack_os": {"kernel": "6.8.0-60-generic", "distribution": {"id": "ubuntu", "version_id": "24.04"}},
        "gpurack_pci": {"available": True, "devices": [], "downgraded": []},
        "gpurack_numa": {"available": True, "count": 2},
    }


def results(gpus: int) -> list[dict[str, Any]]:
    out = []
    for check in CHECKS:
        for i in range(gpus if check.startswith("gpu.") and check != "gpu.count" else 1):
            out.append(
                {
                    "id": check,
                    "component": f"gpu{i}",
                    "verdict": "pass",
                    "measured": 1,
                    "expected": 1,
                    "evidence": {"source": "nvidia-smi -q -x", "lines": []},
                }
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--db", help="database URL (default: a fresh SQLite file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db or str(Path(tmp) / "bench.db")
        rng = random.Random(1)
        first = [
            NodeRecord(
                f"gpu{n:04d}",
                "h200",
                "ansible",
                synthetic_facts(n, args.gpus, rng),
                results=results(args.gpus),
            )
            for n in range(args.nodes)
        ]
        second = []
        for n, record in enumerate(first):
            facts = copy.deepcopy(dict(record.facts))
            if n % 50 == 0:
                facts["gpurack_gpu"]["gpus"][3]["serial"] = f"9{n:012d}"
            if n % 100 == 0:
                facts["gpurack_gpu"]["gpus"][5]["pcie"]["width_current"] = 8
            second.append(NodeRecord(record.host, record.pool, record.source, facts, results=record.results))

        t0 = time.perf_counter()
        store = open_store(url)
        t_open = time.perf_counter() - t0
        with store:
            t0 = time.perf_counter()
            store.record(RunRecord("validate"), first)
            t_first = time.perf_counter() - t0
            t0 = time.perf_counter()
            store.record(RunRecord("validate"), second)
            t_second = time.perf_counter() - t0
            t0 = time.perf_counter()
            bulk_drifted = sum(1 for comparison in store.compare_all() if comparison.drifts)
            t_bulk = time.perf_counter() - t0
            t0 = time.perf_counter()
            drifted = sum(1 for node in first if store.diff(node.host))
            t_diff = time.perf_counter() - t0
            t0 = time.perf_counter()
            listed = len(store.list_nodes())
            t_list = time.perf_counter() - t0
            backend = store.url.split(":", 1)[0]
    n = args.nodes
    rows = n * (1 + args.gpus * 2 + 2 + len(results(args.gpus)))
    print(f"backend {backend}, {n} nodes x {args.gpus} GPUs, {rows // n} rows per snapshot\n")
    print("| figure | value | ratio |")
    print("|---|---:|---|")
    per_host = f"{t_bulk / n * 1000:.2f} ms/host; {bulk_drifted} drifted"
    for what, value, ratio in (
        ("open + migrate", f"{t_open * 1000:.1f} ms", ""),
        ("record run 1", f"{t_first:.2f} s", f"{n / t_first:.0f} records/s"),
        ("record run 2", f"{t_second:.2f} s",
         f"{n / t_second:.0f} records/s; run 2 / run 1 {t_second / t_first:.2f}"),
        ("diff every host (bulk)", f"{t_bulk:.2f} s", per_host),
        ("diff host by host", f"{t_diff:.2f} s",
         f"{t_diff / n * 1000:.2f} ms/host; {drifted} drifted; bulk / host by host {t_bulk / t_diff:.2f}"),
        ("list nodes", f"{t_list * 1000:.1f} ms", f"{listed} nodes"),
    ):  # fmt: skip
        print(f"| {what} | {value} | {ratio} |")


if __name__ == "__main__":
    main()
