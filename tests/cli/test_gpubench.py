"""gpubench: limits, verdicts, result shape, the skip path without torch, counter deltas.

Tests marked `gpu` run the real measurements and skip, with a reason, where PyTorch or a CUDA
device is missing.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_models import (
    find_model,
    pcie_ceiling_gbps,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils._node_facts import gather_all
from ansible_collections.gpurack.bootstrap.plugins.module_utils._results import CheckResult
from ansible_collections.gpurack.bootstrap.plugins.module_utils._source import CaptureSource
from gpurack.gpubench import SAFE_ENV, allreduce, burn, limits, measure
from gpurack.gpubench import results as bench_results
from gpurack.gpubench import tier as bench_tier


def _dicts(value: Any) -> Any:
    """CheckResults (alone or in a list) in their JSON shape; anything else as it is."""
    if isinstance(value, CheckResult):
        return value.to_dict()
    if isinstance(value, list) and value and all(isinstance(v, CheckResult) for v in value):
        return [v.to_dict() for v in value]
    return value


class _AsDicts:
    """A module whose functions return their CheckResults as dicts, so assertions read keys."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._module, name)
        if not callable(value) or isinstance(value, type):
            return value
        return lambda *args, **kwargs: _dicts(value(*args, **kwargs))


tier = _AsDicts(bench_tier)
judged = _AsDicts(bench_results).judged

RESULT_KEYS = {
    "id", "title", "tier", "component", "verdict", "measured", "expected", "unit", "reason",
    "remediation", "evidence", "limit_source", "percent", "duration_s",
}  # fmt: skip
H200 = find_model("NVIDIA H200", "0x2335")
# Measured with PyTorch on a real H200 (shared/fixtures/hw/h200x1/bandwidth.json) and, for the
# all-reduce, on 4 H200s over NVLink.
REFERENCE = {
    "gpu.h2d_bandwidth": 55.45718657489296,
    "gpu.d2h_bandwidth": 55.31796920658194,
    "gpu.d2d_bandwidth": 4262.975794152496 / 1000,
    "gpu.bf16_matmul": 799.5634682521993,
    "gpu.allreduce_busbw": 359.0,
}


@pytest.fixture
def facts(h200x1: Path) -> dict[str, Any]:
    """Every fact of the real 1x H200 capture."""
    return dict(gather_all(CaptureSource(h200x1)))


def _two_gpu_facts(facts: dict[str, Any]) -> dict[str, Any]:
    two = copy.deepcopy(facts)
    second = copy.deepcopy(two["gpurack_gpu"]["gpus"][0])
    second.update(index=1, uuid="GPU-00000000-0000-0000-0000-000000000001", bus_id="0000:00:07.0")
    two["gpurack_gpu"]["gpus"].append(second)
    return two


def _fail_gather() -> dict[str, Any]:
    raise AssertionError("gather must not run when nothing was measured")


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


def test_run_standard_without_torch_skips_each_check_with_reason(facts: dict[str, Any]) -> None:
    if "torch" in sys.modules or measure.unavailable_reason() is None:
        pytest.skip("PyTorch is installed here; this test covers nodes without it")
    results = tier.run_standard(facts, _fail_gather)
    ids = [r["id"] for r in results]
    assert ids == [*tier.PER_GPU_CHECKS, "counters.delta"]  # one GPU: no all-reduce result
    assert {r["verdict"] for r in results} == {"skip"}
    assert all("PyTorch not installed on this node" in r["reason"] for r in results)
    assert results[0]["component"] == "GPU 0 (0000:00:06.0)" and set(results[0]) >= RESULT_KEYS


def test_run_burn_in_without_torch_skips(facts: dict[str, Any]) -> None:
    if measure.unavailable_reason() is None:
        pytest.skip("PyTorch is installed here; this test covers nodes without it")
    results = tier.run_burn_in(5, _two_gpu_facts(facts), _fail_gather)
    assert {r["verdict"] for r in results} == {"skip"}
    assert len([r for r in results if r["id"] == "gpu.burn_in_throttle"]) == 2
    assert all(r["tier"] == "burn-in" for r in results)


def test_run_standard_torch_without_cuda_skips_with_reason(
    facts: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_torch = SimpleNamespace(cuda=SimpleNamespace(is_available=lambda: False))
    real_import = measure.importlib.import_module
    monkeypatch.setattr(
        measure.importlib, "import_module", lambda name: fake_torch if name == "torch" else real_import(name)
    )
    results = tier.run_standard(_two_gpu_facts(facts), _fail_gather)
    assert {r["verdict"] for r in results} == {"skip"}
    assert all(r["reason"].endswith("no CUDA device visible") for r in results)
    assert [r["component"] for r in results if r["id"] == "gpu.allreduce_busbw"] == ["node"]


def test_run_standard_no_gpu_facts_skips_at_node_level() -> None:
    if measure.unavailable_reason() is None:
        pytest.skip("PyTorch is installed here; this test covers nodes without it")
    results = tier.run_standard({}, _fail_gather)
    assert {r["component"] for r in results} == {"node"} and {r["verdict"] for r in results} == {"skip"}


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


def test_burn_results_judge_throughput_stability_and_mismatches(facts: dict[str, Any]) -> None:
    target = tier.targets(facts, [{"index": 0, "uuid": "cf8daf37-ddce-01b6-79fe-9e7477c494b0"}])[0]
    steady = burn.WorkerReport(0, (790.0, 800.0, 795.0, 640.0), (4200.0,) * 4, mismatches=1, batches=4)
    by_id = {r["id"]: r for r in tier._burn_results(target, steady, "method")}
    assert by_id["gpu.burn_in_throughput"]["verdict"] == "pass"
    assert by_id["gpu.burn_in_stability"]["verdict"] == "warn"  # 640 / 792.5 = 0.81
    assert by_id["gpu.burn_in_consistency"]["verdict"] == "fail"
    samples = [
        burn.SmiSample(0.0, 0, 60.0, 1980.0, 700.0, ("sw_power_cap",)),
        burn.SmiSample(10.0, 0, 87.0, 1500.0, 700.0, ("sw_power_cap", "hw_thermal_slowdown")),
    ]
    throttle = tier._throttle_result(target, samples, None)
    assert throttle["verdict"] == "fail" and throttle["measured"] == 87.0
    assert tier._throttle_result(target, samples[:1], None)["verdict"] == "pass"


def test_group_windows_pools_batches_into_sustained_rates() -> None:
    batch = (22.0, 30.0, 2.0, 0.5)  # 22 TFLOP in 30 ms, 2 GB in 0.5 ms
    windows = burn.group_windows([batch] * 70, window_ms=1000.0)
    assert len(windows) == 2  # 33 batches per window; the 4 left over are under half a window
    assert windows[0] == pytest.approx((22.0 / 0.030, 2.0 / 0.0005))
    assert burn.group_windows([batch], window_ms=1000.0) == windows[:1]  # a short run still reports


def test_targets_match_cuda_devices_by_uuid_not_order(facts: dict[str, Any]) -> None:
    two = _two_gpu_facts(facts)
    devices = [
        {"index": 0, "uuid": "00000000-0000-0000-0000-000000000001", "bus_id": None},
        {"index": 1, "uuid": "cf8daf37-ddce-01b6-79fe-9e7477c494b0", "bus_id": None},
    ]
    found = tier.targets(two, devices)
    assert [(t.index, t.cuda) for t in found] == [(0, 1), (1, 0)]
    assert found[0].model is H200 and found[0].skip_reason is None


def test_targets_mig_and_invisible_gpus_skip_with_reason(facts: dict[str, Any]) -> None:
    two = _two_gpu_facts(facts)
    two["gpurack_gpu"]["gpus"][0]["mig_mode"] = True
    found = tier.targets(two, [{"index": 0, "uuid": "cf8daf37-ddce-01b6-79fe-9e7477c494b0"}])
    assert found[0].skip_reason is not None and "MIG" in found[0].skip_reason
    assert (
        found[1].cuda is None and found[1].skip_reason is not None and "not visible" in found[1].skip_reason
    )


def test_nvlink_connected_reads_topology(facts: dict[str, Any]) -> None:
    two = _two_gpu_facts(facts)
    two["gpurack_gpu"]["topology"] = {"links": {"GPU0": {"GPU1": "NV18"}, "GPU1": {"GPU0": "NV18"}}}
    assert tier.nvlink_connected(two, H200)[0] is True
    two["gpurack_gpu"]["topology"] = {"links": {"GPU0": {"GPU1": "SYS"}, "GPU1": {"GPU0": "SYS"}}}
    assert tier.nvlink_connected(two, H200) == (False, "nvidia-smi topo -m: GPU pairs linked by SYS")


def test_counter_deltas_unchanged_facts_pass(facts: dict[str, Any]) -> None:
    results = tier.counter_deltas(facts, copy.deepcopy(facts))
    assert [r["verdict"] for r in results] == ["pass"]
    assert results[0]["measured"] == 0 and set(results[0]) >= RESULT_KEYS


def test_counter_deltas_new_xid_fails_on_its_gpu(facts: dict[str, Any]) -> None:
    after = copy.deepcopy(facts)
    after["gpurack_os"]["xid_events"] = [
        {
            "time": "t1",
            "bus_id": "0000:00:06.0",
            "xid": 79,
            "pid": None,
            "process": None,
            "message": "fell off",
        }
    ]
    results = tier.counter_deltas(facts, after)
    assert [r["verdict"] for r in results] == ["fail"]
    assert (
        results[0]["details"]["deltas"] == {"Xid 79": 1} and "Xid 79" in results[0]["evidence"]["lines"][-1]
    )


def test_counter_deltas_old_xid_is_not_new(facts: dict[str, Any]) -> None:
    event = {"time": "t0", "bus_id": "0000:00:06.0", "xid": 13, "pid": 1, "process": "p", "message": "m"}
    before = copy.deepcopy(facts)
    before["gpurack_os"]["xid_events"] = [event]
    after = copy.deepcopy(before)
    assert tier.new_xids(before, after) == []
    after["gpurack_os"]["xid_events"] = [event, dict(event)]  # the same line logged again
    assert len(tier.new_xids(before, after)) == 1


def test_counter_deltas_stray_xid_fails_at_node(facts: dict[str, Any]) -> None:
    after = copy.deepcopy(facts)
    after["gpurack_os"]["xid_events"] = [
        {"time": None, "bus_id": "0000:99:00.0", "xid": 48, "message": "DBE"}
    ]
    results = tier.counter_deltas(facts, after)
    assert [(r["component"], r["verdict"]) for r in results] == [
        ("GPU 0 (0000:00:06.0)", "pass"),
        ("node", "fail"),
    ]


@pytest.mark.parametrize(
    ("path", "value", "verdict"),
    [
        (("ecc_errors", "volatile_uncorrected"), 2, "fail"),
        (("ecc_errors", "volatile_corrected"), 5, "warn"),
        (("remapped_rows", "pending"), True, "warn"),
        (("remapped_rows", "failure"), True, "fail"),
        (("remapped_rows", "uncorrectable"), 1, "fail"),
    ],
)
def test_counter_deltas_rising_gpu_counter_sets_verdict(
    facts: dict[str, Any], path: tuple[str, str], value: Any, verdict: str
) -> None:
    after = copy.deepcopy(facts)
    after["gpurack_gpu"]["gpus"][0][path[0]][path[1]] = value
    result = tier.counter_deltas(facts, after)[0]
    assert result["verdict"] == verdict and result["remediation"]


def test_counter_deltas_pcie_replays_from_the_gpu_facts(facts: dict[str, Any]) -> None:
    # issue 12: the replay counters are read where _gpu_facts writes them (pcie_replays, from
    # nvidia-smi's pci/replay_counter); NVLink error counters are no fact, so nothing reads them.
    before = copy.deepcopy(facts)
    assert before["gpurack_gpu"]["gpus"][0]["pcie_replays"] == {"since_reset": 0, "rollovers": 0}
    after = copy.deepcopy(before)
    after["gpurack_gpu"]["gpus"][0]["pcie_replays"]["since_reset"] = 6
    result = tier.counter_deltas(before, after)[0]
    assert result["verdict"] == "warn"
    assert result["details"]["deltas"] == {"PCIe replays": 6}


def test_counter_deltas_missing_gpu_fails(facts: dict[str, Any]) -> None:
    after = copy.deepcopy(facts)
    after["gpurack_gpu"]["gpus"] = []
    result = tier.counter_deltas(facts, after)[0]
    assert result["verdict"] == "fail" and "missing" in result["reason"]


def test_counter_deltas_rdma_symbol_errors_warn() -> None:
    port = {"device": "mlx5_0", "port": 1, "counters": {"symbol_error": 0, "link_downed": 1}}
    before = {"gpurack_nic": {"rdma": [port]}}
    after = {"gpurack_nic": {"rdma": [{**port, "counters": {"symbol_error": 12, "link_downed": 1}}]}}
    results = tier.counter_deltas(before, after)
    assert [(r["component"], r["verdict"], r["details"]["deltas"]) for r in results] == [
        ("mlx5_0 port 1", "warn", {"symbol_error": 12})
    ]


def test_regather_failure_skips_counter_check(facts: dict[str, Any]) -> None:
    def broken() -> dict[str, Any]:
        raise RuntimeError("nvidia-smi hung")

    results = tier._regather(facts, broken, "standard", lambda _: None)
    assert [(r["verdict"], r["reason"]) for r in results] == [
        ("skip", "could not re-read the facts after the run: nvidia-smi hung")
    ]


def test_gpubench_main_prints_json_without_torch(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if measure.unavailable_reason() is None:
        pytest.skip("PyTorch is installed here; this test covers nodes without it")
    from gpurack.gpubench import __main__ as cli

    monkeypatch.setattr(cli, "_gather", lambda: {})
    assert cli.main(["--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["environment"] == "PyTorch not installed on this node"
    assert document["summary"] == {"skip": len(document["results"])}


# --- real measurements: run by hand on a GPU node (pytest -m gpu) ---------------------------


def _cuda() -> Any:
    torch = pytest.importorskip("torch", reason="PyTorch not installed on this node")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device visible")
    return torch


@pytest.mark.gpu
@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_gpu_copy_bandwidth_measures_pinned_copies(direction: str) -> None:
    _cuda()
    m = measure.copy_bandwidth(0, direction)  # type: ignore[arg-type]
    assert m.unit == "GB/s" and len(m.samples) >= 5 and 1.0 < m.value < 1000.0


@pytest.mark.gpu
def test_gpu_d2d_and_bf16_measure_plausible_rates() -> None:
    _cuda()
    d2d = measure.d2d_bandwidth(0)
    bf16 = measure.bf16_matmul(0)
    assert d2d.unit == "TB/s" and 0.1 < d2d.value < 20.0
    assert bf16.unit == "TFLOP/s" and len(bf16.samples) >= 10 and 1.0 < bf16.value < 5000.0


@pytest.mark.gpu
def test_gpu_allreduce_across_all_gpus() -> None:
    torch = _cuda()
    if torch.cuda.device_count() < 2:
        pytest.skip("one CUDA device: an all-reduce needs at least 2")
    result = allreduce.run_allreduce(list(range(torch.cuda.device_count())))
    assert [p.size_bytes for p in result.points] == list(allreduce.DEFAULT_SIZES)
    assert all(p.busbw_gbps > 1.0 for p in result.points)


@pytest.mark.gpu
def test_gpu_run_standard_end_to_end() -> None:
    _cuda()
    from gpurack import local

    def gather() -> dict[str, Any]:
        return dict(gather_all(local.live_source()))

    results = tier.run_standard(gather(), gather)
    assert results and all(set(r) >= RESULT_KEYS for r in results)
    assert not [r for r in results if r["verdict"] == "skip" and r["id"] != "gpu.allreduce_busbw"]


def test_measured_results_use_the_quick_tiers_constructor() -> None:
    """One constructor for every tier: evidence cut to 20 lines, limit_source and title filled."""
    limit = limits.Limit(63.0, "GB/s", "test limit")
    measured = bench_results.judged(
        "gpu.h2d_bandwidth", "GPU 0", 25.0, "GB/s", limit, lines=map(str, range(30))
    )
    assert isinstance(measured, CheckResult) and len(measured.evidence.lines) == 20
    assert measured.limit_source.startswith("test limit. Threshold:")
    assert measured.title == "Host-to-device bandwidth" and measured.tier == "standard"
    failed = bench_tier._burn_results(
        bench_tier.GpuTarget(0, 0, "GPU 0", bench_tier.GpuView({}), H200),
        burn.WorkerReport(0, (), (), 0, 0, "worker died"),
        "method",
    )
    assert {r.verdict.value for r in failed} == {"fail"}
    assert all(r.limit_source and r.remediation and r.tier == "burn-in" for r in failed)
