"""Shared by the gpubench tests: results as dicts, the H200 model and reference figures, facts."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_models import (
    find_model,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.node import gather_all
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureSource
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult
from gpurack.gpubench import burnin as bench_burnin
from gpurack.gpubench import deltas as bench_deltas
from gpurack.gpubench import results as bench_results
from gpurack.gpubench import targets as bench_targets
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
burnin = _AsDicts(bench_burnin)
targets = _AsDicts(bench_targets)
deltas = _AsDicts(bench_deltas)
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


def h200_facts(root: Path) -> dict[str, Any]:
    """Every fact of a capture (the real 1x H200 one in the tests)."""
    return dict(gather_all(CaptureSource(root)))


def two_gpu_facts(facts: dict[str, Any]) -> dict[str, Any]:
    two = copy.deepcopy(facts)
    second = copy.deepcopy(two["gpurack_gpu"]["gpus"][0])
    second.update(index=1, uuid="GPU-00000000-0000-0000-0000-000000000001", bus_id="0000:00:07.0")
    two["gpurack_gpu"]["gpus"].append(second)
    return two


def fail_gather() -> dict[str, Any]:
    raise AssertionError("gather must not run when nothing was measured")
