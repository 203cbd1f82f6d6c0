"""Expectations schema: valid examples pass, each problem is reported with its full path."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import validate_expect
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.expect import get

DESIGN_EXAMPLE = {
    "gpu": {
        "count": 8,
        "model": "NVIDIA H100 80GB HBM3",
        "min_memory_mib": 80000,
        "pcie": {"gen": 5, "width": 16},
        "nvlinks_per_gpu": 18,
    },
    "rdma": {"ports": 8, "rate_gbps": 400, "link_layer": "InfiniBand"},
    "numa_nodes": 2,
    "nvme": {"count": 8},
    "driver": {"version": "580.159.04", "branch": 580},
    "cuda": {"version": "13.0"},
    "os": {"cgroup_version": 2},
}


@pytest.mark.parametrize("expect", [DESIGN_EXAMPLE, {}, None, {"gpu": {}}, {"rdma": {"rate_gbps": 12.5}}])
def test_validate_expect_valid_has_no_errors(expect: Any) -> None:
    assert validate_expect(expect) == []


@pytest.mark.parametrize(
    ("expect", "error"),
    [
        (
            {"gpu": {"count": "eight"}},
            "gpurack_expect.gpu.count: expected a non-negative integer, got 'eight'",
        ),
        ({"gpu": {"count": -1}}, "gpurack_expect.gpu.count: expected a non-negative integer, got -1"),
        ({"gpu": {"count": True}}, "gpurack_expect.gpu.count: expected a non-negative integer, got True"),
        ({"gpu": {"model": ""}}, "gpurack_expect.gpu.model: expected a non-empty string, got ''"),
        (
            {"gpu": {"pcie": {"gen": 7}}},
            "gpurack_expect.gpu.pcie.gen: expected one of 1, 2, 3, 4, 5, 6, got 7",
        ),
        (
            {"gpu": {"pcie": {"width": "16"}}},
            "gpurack_expect.gpu.pcie.width: expected one of 1, 2, 4, 8, 16, 32, got '16'",
        ),
        ({"gpu": {"pcie": 5}}, "gpurack_expect.gpu.pcie: expected a mapping, got 5"),
        (
            {"gpu": {"cuont": 8}},
            "gpurack_expect.gpu.cuont: unknown key "
            "(known: count, model, min_memory_mib, pcie, nvlinks_per_gpu)",
        ),
        (
            {"rdma": {"link_layer": "infiniband"}},
            "gpurack_expect.rdma.link_layer: expected one of InfiniBand, Ethernet, got 'infiniband'",
        ),
        ({"rdma": {"rate_gbps": 0}}, "gpurack_expect.rdma.rate_gbps: expected a positive number, got 0"),
        ({"numa_nodes": 0}, "gpurack_expect.numa_nodes: expected a positive integer, got 0"),
        ({"nvme": 8}, "gpurack_expect.nvme: expected a mapping, got 8"),
        (
            {"cuda": {"version": 13.0}},
            "gpurack_expect.cuda.version: "
            "expected a version string such as '580.159.04' (quote it in YAML), got 13.0",
        ),
        (
            {"driver": {"branch": "r580"}},
            "gpurack_expect.driver.branch: expected a driver branch such as '580', got 'r580'",
        ),
        ({"os": {"cgroup_version": "2"}}, "gpurack_expect.os.cgroup_version: expected one of 1, 2, got '2'"),
        ([], "gpurack_expect: expected a mapping, got []"),
    ],
)
def test_validate_expect_reports_path_and_value(expect: Any, error: str) -> None:
    assert validate_expect(expect) == [error]


def test_validate_expect_reports_every_problem_under_the_given_path() -> None:
    errors = validate_expect({"gpu": {"count": "x", "pcie": {"gen": 9}}, "extra": 1}, path="pool.expect")
    assert errors == [
        "pool.expect.gpu.count: expected a non-negative integer, got 'x'",
        "pool.expect.gpu.pcie.gen: expected one of 1, 2, 3, 4, 5, 6, got 9",
        "pool.expect.extra: unknown key (known: gpu, rdma, numa_nodes, nvme, driver, cuda, os)",
    ]


def test_get_reads_dotted_paths() -> None:
    assert get(DESIGN_EXAMPLE, "gpu.pcie.gen") == 5
    assert get(DESIGN_EXAMPLE, "gpu.pcie.lanes") is None
    assert get({"gpu": 8}, "gpu.count") is None
