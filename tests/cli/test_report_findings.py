"""The report's findings: one row per cause, grouped across GPUs and links, naming where."""

from __future__ import annotations

from typing import Any

import pytest
from gpurack.report.model import check_entry
from report_helpers import GPU_BUS, clock_warning, downgraded


def _findings(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from gpurack.report.findings import group

    return group([check_entry(r) for r in results])


def test_findings_group_one_warning_per_gpu_into_one_row() -> None:
    (finding,) = _findings([clock_warning(i) for i in range(8)])
    assert finding["where"] == "GPUs 0\N{EN DASH}7"
    assert finding["reason"] == "clocks held down by hw_slowdown"
    assert finding["components"] == [f"GPU {i} (0000:{b}:00.0)" for i, b in enumerate(GPU_BUS)]
    assert [block["where"] for block in finding["evidence"]] == finding["components"]  # lines differ


def test_findings_keep_apart_what_differs_in_verdict_reason_or_value() -> None:
    passing = {**clock_warning(7), "verdict": "pass", "reason": None, "remediation": None}
    findings = _findings(
        [
            *(clock_warning(i) for i in (0, 1, 2, 3, 5)),
            clock_warning(4, ("hw_power_brake_slowdown",)),
            passing,
        ]
    )
    assert [(f["verdict"], f["where"], f["reason"]) for f in findings] == [
        ("warn", "GPUs 0\N{EN DASH}3, 5", "clocks held down by hw_slowdown"),
        ("warn", "GPU 4 (0000:9b:00.0)", "GPU 4 (0000:9b:00.0): clocks held down by hw_power_brake_slowdown"),
        ("pass", "GPU 7 (0000:db:00.0)", None),
    ]


def test_findings_group_pci_links_and_name_the_shared_device() -> None:
    buses = ("0000:17:00.0", "0000:39:00.0", "0000:4a:00.0")
    findings = _findings(
        [*(downgraded(b, 16.0, 32.0) for b in buses), downgraded("0000:80:01.0", 16.0, 16.0)]
    )
    assert [f["where"] for f in findings] == [
        "PCI 0000:17:00.0, 0000:39:00.0, 0000:4a:00.0",
        "PCI 0000:80:01.0",
    ]
    assert findings[0]["reason"] == (
        "PCI bridge: Broadcom / LSI PEX890xx (rev b0): links at 16.0 GT/s x4, capable of 32.0 GT/s x4"
    )


@pytest.mark.parametrize(
    ("components", "where"),
    [
        (["GPU 0 (0000:18:00.0)"], "GPU 0 (0000:18:00.0)"),
        ([f"GPU {i} (0000:{b}:00.0)" for i, b in enumerate(GPU_BUS)], "GPUs 0\N{EN DASH}7"),
        (["GPU 0", "GPU 1"], "GPUs 0, 1"),
        (["node", "node"], "node"),
        (
            [f"mlx5_{i} port 1" for i in (0, 1, 4, 5, 6, 7)] + ["mlx5_bond_0 port 1", "mlx5_0 port 2"],
            "port 1 on mlx5_0, mlx5_1, mlx5_4\N{EN DASH}7, mlx5_bond_0; port 2 on mlx5_0",
        ),
        (["GPU 2 (0000:4c:00.0)", "GPU 3 (0000:5d:00.0)", "nvme0n1"], "GPUs 2, 3; nvme0n1"),
    ],
)
def test_where_names_components_compactly(components: list[str], where: str) -> None:
    from gpurack.report.findings import where as name

    assert name(components) == where


def test_shared_reason_takes_only_a_whole_leading_component_off() -> None:
    from gpurack.report.findings import shared_reason

    check = {"component": "GPU 1", "reason": "GPU 10 (0000:aa:00.0): hot"}
    assert shared_reason(check) is None
    assert shared_reason({"component": "GPU 1", "reason": "GPU 1: hot"}) == "hot"
    assert shared_reason({"component": "node", "reason": "no facts"}) is None
