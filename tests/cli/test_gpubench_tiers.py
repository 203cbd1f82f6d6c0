"""gpubench tiers: result shape, the skip path without torch, GPU targets, burn-in judging.

Tests marked `gpu` run the real measurements and skip, with a reason, where PyTorch or a CUDA
device is missing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_views import GpuView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.node import gather_all
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult
from gpubench_helpers import (
    H200,
    RESULT_KEYS,
    burnin,
    fail_gather,
    h200_facts,
    targets,
    tier,
    two_gpu_facts,
)
from gpurack.gpubench import allreduce, burn, limits, measure
from gpurack.gpubench import burnin as bench_burnin
from gpurack.gpubench import results as bench_results
from gpurack.gpubench import targets as bench_targets


@pytest.fixture
def facts(h200x1: Path) -> dict[str, Any]:
    """Every fact of the real 1x H200 capture."""
    return h200_facts(h200x1)


def test_run_standard_without_torch_skips_each_check_with_reason(facts: dict[str, Any]) -> None:
    if "torch" in sys.modules or measure.unavailable_reason() is None:
        pytest.skip("PyTorch is installed here; this test covers nodes without it")
    results = tier.run_standard(facts, fail_gather)
    ids = [r["id"] for r in results]
    assert ids == [*tier.PER_GPU_CHECKS, "counters.delta"]  # one GPU: no all-reduce result
    assert {r["verdict"] for r in results} == {"skip"}
    assert all("PyTorch not installed on this node" in r["reason"] for r in results)
    assert results[0]["component"] == "GPU 0 (0000:00:06.0)" and set(results[0]) >= RESULT_KEYS


def test_run_burn_in_without_torch_skips(facts: dict[str, Any]) -> None:
    if measure.unavailable_reason() is None:
        pytest.skip("PyTorch is installed here; this test covers nodes without it")
    results = burnin.run_burn_in(5, two_gpu_facts(facts), fail_gather)
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
    results = tier.run_standard(two_gpu_facts(facts), fail_gather)
    assert {r["verdict"] for r in results} == {"skip"}
    assert all(r["reason"].endswith("no CUDA device visible") for r in results)
    assert [r["component"] for r in results if r["id"] == "gpu.allreduce_busbw"] == ["node"]


def test_run_standard_no_gpu_facts_skips_at_node_level() -> None:
    if measure.unavailable_reason() is None:
        pytest.skip("PyTorch is installed here; this test covers nodes without it")
    results = tier.run_standard({}, fail_gather)
    assert {r["component"] for r in results} == {"node"} and {r["verdict"] for r in results} == {"skip"}


def test_burn_results_judge_throughput_stability_and_mismatches(facts: dict[str, Any]) -> None:
    target = targets.targets(facts, [{"index": 0, "uuid": "cf8daf37-ddce-01b6-79fe-9e7477c494b0"}])[0]
    steady = burn.WorkerReport(0, (790.0, 800.0, 795.0, 640.0), (4200.0,) * 4, mismatches=1, batches=4)
    by_id = {r["id"]: r for r in burnin._burn_results(target, steady, "method")}
    assert by_id["gpu.burn_in_throughput"]["verdict"] == "pass"
    assert by_id["gpu.burn_in_stability"]["verdict"] == "warn"  # 640 / 792.5 = 0.81
    assert by_id["gpu.burn_in_consistency"]["verdict"] == "fail"
    samples = [
        burn.SmiSample(0.0, 0, 60.0, 1980.0, 700.0, ("sw_power_cap",)),
        burn.SmiSample(10.0, 0, 87.0, 1500.0, 700.0, ("sw_power_cap", "hw_thermal_slowdown")),
    ]
    throttle = burnin._throttle_result(target, samples, None)
    assert throttle["verdict"] == "fail" and throttle["measured"] == 87.0
    assert burnin._throttle_result(target, samples[:1], None)["verdict"] == "pass"


def test_targets_match_cuda_devices_by_uuid_not_order(facts: dict[str, Any]) -> None:
    two = two_gpu_facts(facts)
    devices = [
        {"index": 0, "uuid": "00000000-0000-0000-0000-000000000001", "bus_id": None},
        {"index": 1, "uuid": "cf8daf37-ddce-01b6-79fe-9e7477c494b0", "bus_id": None},
    ]
    found = targets.targets(two, devices)
    assert [(t.index, t.cuda) for t in found] == [(0, 1), (1, 0)]
    assert found[0].model is H200 and found[0].skip_reason is None


def test_targets_mig_and_invisible_gpus_skip_with_reason(facts: dict[str, Any]) -> None:
    two = two_gpu_facts(facts)
    two["gpurack_gpu"]["gpus"][0]["mig_mode"] = True
    found = targets.targets(two, [{"index": 0, "uuid": "cf8daf37-ddce-01b6-79fe-9e7477c494b0"}])
    assert found[0].skip_reason is not None and "MIG" in found[0].skip_reason
    assert (
        found[1].cuda is None and found[1].skip_reason is not None and "not visible" in found[1].skip_reason
    )


def test_nvlink_connected_reads_topology(facts: dict[str, Any]) -> None:
    two = two_gpu_facts(facts)
    two["gpurack_gpu"]["topology"] = {"links": {"GPU0": {"GPU1": "NV18"}, "GPU1": {"GPU0": "NV18"}}}
    assert targets.nvlink_connected(two, H200)[0] is True
    two["gpurack_gpu"]["topology"] = {"links": {"GPU0": {"GPU1": "SYS"}, "GPU1": {"GPU0": "SYS"}}}
    assert targets.nvlink_connected(two, H200) == (False, "nvidia-smi topo -m: GPU pairs linked by SYS")


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
    failed = bench_burnin._burn_results(
        bench_targets.GpuTarget(0, 0, "GPU 0", GpuView({}), H200),
        burn.WorkerReport(0, (), (), 0, 0, "worker died"),
        "method",
    )
    assert {r.verdict.value for r in failed} == {"fail"}
    assert all(r.limit_source and r.remediation and r.tier == "burn-in" for r in failed)
