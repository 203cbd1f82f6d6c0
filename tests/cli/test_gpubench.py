"""gpubench: limits, verdicts, the measuring workers and their environment.

The tiers are in test_gpubench_tiers.py, the counter deltas in test_gpubench_deltas.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_model_type import pcie_ceiling_gbps
from gpubench_helpers import (
    H200,
    REFERENCE,
    RESULT_KEYS,
    h200_facts,
    judged,
    tier,
)
from gpurack.gpubench import SAFE_ENV, allreduce, burn, limits


@pytest.fixture
def facts(h200x1: Path) -> dict[str, Any]:
    """Every fact of the real 1x H200 capture."""
    return h200_facts(h200x1)


def test_pcie_ceiling_gbps_gen5_x16_exact() -> None:
    assert pcie_ceiling_gbps(5, 16) == pytest.approx(32 * 16 * 128 / 130 / 8)
    assert round(pcie_ceiling_gbps(5, 16), 3) == 63.015


@pytest.mark.parametrize(
    ("gen", "width", "expected"),
    [(5, 16, 63.015), (4, 16, 31.508), (3, 16, 15.754), (5, 8, 31.508), (2, 16, 8.0), (1, 1, 0.25)],
)
def test_pcie_ceiling_gbps_matches_spec_rate(gen: int, width: int, expected: float) -> None:
    assert pcie_ceiling_gbps(gen, width) == pytest.approx(expected, abs=0.001)


@pytest.mark.parametrize(("gen", "width"), [(7, 16), (0, 16), (5, 0)])
def test_pcie_ceiling_gbps_unknown_link_raises(gen: int, width: int) -> None:
    with pytest.raises(ValueError, match="PCIe"):
        pcie_ceiling_gbps(gen, width)


@pytest.mark.parametrize(
    ("algbw", "ranks", "busbw"), [(100.0, 2, 100.0), (100.0, 4, 150.0), (100.0, 8, 175.0)]
)
def test_busbw_from_algbw_uses_nccl_tests_factor(algbw: float, ranks: int, busbw: float) -> None:
    assert limits.busbw_from_algbw(algbw, ranks) == pytest.approx(busbw)


def test_busbw_from_algbw_zero_ranks_raises() -> None:
    with pytest.raises(ValueError, match="at least one rank"):
        limits.busbw_from_algbw(1.0, 0)


@pytest.mark.parametrize(
    ("check_id", "ratio", "verdict"),
    [
        ("gpu.h2d_bandwidth", 0.80, "pass"),
        ("gpu.h2d_bandwidth", 0.7999, "warn"),
        ("gpu.d2h_bandwidth", 0.60, "warn"),
        ("gpu.d2h_bandwidth", 0.5999, "fail"),
        ("gpu.d2d_bandwidth", 0.75, "pass"),
        ("gpu.d2d_bandwidth", 0.7499, "warn"),
        ("gpu.bf16_matmul", 0.75, "pass"),
        ("gpu.bf16_matmul", 0.5999, "fail"),
        ("gpu.allreduce_busbw", 0.70, "pass"),
        ("gpu.allreduce_busbw", 0.6999, "warn"),
        ("gpu.allreduce_busbw", 0.59, "fail"),
        ("gpu.burn_in_stability", 0.90, "pass"),
        ("gpu.burn_in_stability", 0.85, "warn"),
        ("gpu.burn_in_stability", 0.79, "fail"),
    ],
)
def test_threshold_verdict_at_boundaries(check_id: str, ratio: float, verdict: str) -> None:
    assert limits.THRESHOLDS[check_id].verdict(ratio * 63.0, 63.0) == verdict


def test_threshold_verdict_zero_limit_fails() -> None:
    assert limits.THRESHOLDS["gpu.h2d_bandwidth"].verdict(10.0, 0.0) == "fail"


def test_thresholds_each_have_provenance() -> None:
    assert all(len(t.source) > 40 for t in limits.THRESHOLDS.values())


def test_limits_for_h200_come_from_model_table(facts: dict[str, Any]) -> None:
    gpu = facts["gpurack_gpu"]["gpus"][0]
    pcie = limits.pcie_limit(gpu, H200)
    assert pcie is not None and pcie.value == 63.015 and "Gen5 x16" in pcie.source
    hbm, bf16 = limits.hbm_limit(H200), limits.bf16_limit(H200)
    assert hbm is not None and (hbm.value, hbm.unit) == (4.8, "TB/s")
    assert bf16 is not None and bf16.value == pytest.approx(989.4)
    nvlink = limits.allreduce_limit(gpu, H200, nvlink_connected=True)
    assert nvlink is not None and nvlink.value == pytest.approx(450.0) and "18 NVLinks" in nvlink.source
    no_nvlink = limits.allreduce_limit(gpu, H200, nvlink_connected=False)
    assert no_nvlink is not None and no_nvlink.value == 63.015


def test_limits_unknown_model_use_reported_link_or_none() -> None:
    gpu = {"pcie": {"gen_max": 4, "width_max": 16}}
    pcie = limits.pcie_limit(gpu, None)
    assert pcie is not None and pcie.value == 31.508 and "not in the table" in pcie.source
    assert limits.pcie_limit({"pcie": None}, None) is None
    assert limits.hbm_limit(None) is None and limits.bf16_limit(None) is None


@pytest.mark.parametrize("check_id", sorted(REFERENCE))
def test_judged_reference_h200_figures_pass(facts: dict[str, Any], check_id: str) -> None:
    gpu = facts["gpurack_gpu"]["gpus"][0]
    limit = {
        "gpu.h2d_bandwidth": limits.pcie_limit(gpu, H200),
        "gpu.d2h_bandwidth": limits.pcie_limit(gpu, H200),
        "gpu.d2d_bandwidth": limits.hbm_limit(H200),
        "gpu.bf16_matmul": limits.bf16_limit(H200),
        "gpu.allreduce_busbw": limits.allreduce_limit(gpu, H200, nvlink_connected=True),
    }[check_id]
    assert limit is not None
    result = judged(check_id, "GPU 0 (0000:00:06.0)", REFERENCE[check_id], limit.unit, limit)
    assert result["verdict"] == "pass", result["reason"]
    assert set(result) >= RESULT_KEYS and set(result["evidence"]) == {"source", "lines"}
    assert result["expected"] == limit.value and 75 < result["percent"] < 95
    assert "Threshold:" in result["limit_source"] and result["remediation"] is None


def test_judged_low_measurement_fails_with_remediation() -> None:
    limit = limits.Limit(63.0, "GB/s", "test")
    result = judged("gpu.h2d_bandwidth", "GPU 0", 25.0, "GB/s", limit)
    assert result["verdict"] == "fail" and result["percent"] == pytest.approx(39.7)
    assert "PCIe link" in result["remediation"]


def test_judged_without_limit_skips_but_keeps_measurement() -> None:
    result = judged("gpu.bf16_matmul", "GPU 0", 123.4, "TFLOP/s", None)
    assert result["verdict"] == "skip" and result["measured"] == 123.4
    assert "no limit" in result["reason"]


def test_package_import_turns_nvlink_multicast_off() -> None:
    for key, value in SAFE_ENV.items():
        assert os.environ[key] == value
    assert SAFE_ENV["NCCL_NVLS_ENABLE"] == "0" and SAFE_ENV["NVSHMEM_DISABLE_NVLS"] == "1"


def test_worker_env_forces_safe_env_and_package_path() -> None:
    env = allreduce.worker_env({"NCCL_NVLS_ENABLE": "1", "PYTHONPATH": "/elsewhere"})
    assert env["NCCL_NVLS_ENABLE"] == "0" and env["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1"
    package_root = Path(tier.__file__).resolve().parents[2]
    assert env["PYTHONPATH"].split(os.pathsep) == [str(package_root), "/elsewhere"]


def test_allreduce_result_from_worker_median_busbw() -> None:
    size = 2 << 30
    point = {"size_bytes": size, "timings_ms": [10.0, 9.0, 11.0]}
    line = json.dumps({"ranks": 4, "points": [point], "nccl": "2.28.9"})
    data = allreduce.parse_worker_output(f"NCCL INFO noise\nGPUBENCH_ALLREDUCE {line}\n")
    result = allreduce.result_from_worker(data, [0, 1, 2, 3], 12.5)
    measured = result.points[0]
    assert measured.algbw_gbps == pytest.approx(size / 0.010 / 1e9)
    assert measured.busbw_gbps == pytest.approx(measured.algbw_gbps * 1.5)
    assert result.point(size) is measured and result.nccl == "2.28.9"


def test_allreduce_worker_output_without_result_raises() -> None:
    with pytest.raises(allreduce.AllReduceError, match="no result line"):
        allreduce.parse_worker_output("segfault\n")


def test_run_allreduce_one_gpu_raises() -> None:
    with pytest.raises(allreduce.AllReduceError, match="at least 2 GPUs"):
        allreduce.run_allreduce([0])


@pytest.mark.parametrize(
    ("mask", "names"),
    [
        ("0x0000000000000000", ()),
        ("0x0000000000000004", ("sw_power_cap",)),
        ("0x0000000000000048", ("hw_slowdown", "hw_thermal_slowdown")),
        ("[N/A]", ()),
    ],
)
def test_decode_reasons_maps_nvml_bits(mask: str, names: tuple[str, ...]) -> None:
    assert burn.decode_reasons(mask) == names


def test_sample_smi_falls_back_to_throttle_field_name() -> None:
    calls: list[str] = []

    def runner(argv: Any) -> tuple[int, str]:
        calls.append(argv[1])
        if "clocks_event_reasons" in argv[1]:
            return 2, 'Field "clocks_event_reasons.active" is not a valid field to query.'
        return 0, "0, 71, 1980, 690.12, 0x0000000000000004\n1, 88, 1400, [N/A], 0x0000000000000040\n"

    samples, error = burn.sample_smi(3.0, runner)
    assert error is None and len(calls) == 2 and "clocks_throttle_reasons.active" in calls[1]
    assert samples[0] == burn.SmiSample(3.0, 0, 71.0, 1980.0, 690.12, ("sw_power_cap",))
    assert samples[1].power_w is None and samples[1].reasons == ("hw_thermal_slowdown",)


def test_sample_smi_missing_tool_reports_reason() -> None:
    samples, error = burn.sample_smi(0.0, lambda argv: (127, "nvidia-smi: not found"))
    assert samples == [] and error is not None and "127" in error


def test_group_windows_pools_batches_into_sustained_rates() -> None:
    batch = (22.0, 30.0, 2.0, 0.5)  # 22 TFLOP in 30 ms, 2 GB in 0.5 ms
    windows = burn.group_windows([batch] * 70, window_ms=1000.0)
    assert len(windows) == 2  # 33 batches per window; the 4 left over are under half a window
    assert windows[0] == pytest.approx((22.0 / 0.030, 2.0 / 0.0005))
    assert burn.group_windows([batch], window_ms=1000.0) == windows[:1]  # a short run still reports
