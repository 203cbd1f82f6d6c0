"""gpubench counter deltas: what rose between the facts before and after a measured run."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from gpubench_helpers import (
    RESULT_KEYS,
    deltas,
    h200_facts,
)


@pytest.fixture
def facts(h200x1: Path) -> dict[str, Any]:
    """Every fact of the real 1x H200 capture."""
    return h200_facts(h200x1)


def test_counter_deltas_unchanged_facts_pass(facts: dict[str, Any]) -> None:
    results = deltas.counter_deltas(facts, copy.deepcopy(facts))
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
    results = deltas.counter_deltas(facts, after)
    assert [r["verdict"] for r in results] == ["fail"]
    assert (
        results[0]["details"]["deltas"] == {"Xid 79": 1} and "Xid 79" in results[0]["evidence"]["lines"][-1]
    )


def test_counter_deltas_old_xid_is_not_new(facts: dict[str, Any]) -> None:
    event = {"time": "t0", "bus_id": "0000:00:06.0", "xid": 13, "pid": 1, "process": "p", "message": "m"}
    before = copy.deepcopy(facts)
    before["gpurack_os"]["xid_events"] = [event]
    after = copy.deepcopy(before)
    assert deltas.new_xids(before, after) == []
    after["gpurack_os"]["xid_events"] = [event, dict(event)]  # the same line logged again
    assert len(deltas.new_xids(before, after)) == 1


def test_counter_deltas_stray_xid_fails_at_node(facts: dict[str, Any]) -> None:
    after = copy.deepcopy(facts)
    after["gpurack_os"]["xid_events"] = [
        {"time": None, "bus_id": "0000:99:00.0", "xid": 48, "message": "DBE"}
    ]
    results = deltas.counter_deltas(facts, after)
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
    result = deltas.counter_deltas(facts, after)[0]
    assert result["verdict"] == verdict and result["remediation"]


def test_counter_deltas_pcie_replays_from_the_gpu_facts(facts: dict[str, Any]) -> None:
    # issue 12: the replay counters are read where _gpu_facts writes them (pcie_replays, from
    # nvidia-smi's pci/replay_counter); NVLink error counters are no fact, so nothing reads them.
    before = copy.deepcopy(facts)
    assert before["gpurack_gpu"]["gpus"][0]["pcie_replays"] == {"since_reset": 0, "rollovers": 0}
    after = copy.deepcopy(before)
    after["gpurack_gpu"]["gpus"][0]["pcie_replays"]["since_reset"] = 6
    result = deltas.counter_deltas(before, after)[0]
    assert result["verdict"] == "warn"
    assert result["details"]["deltas"] == {"PCIe replays": 6}


def test_counter_deltas_missing_gpu_fails(facts: dict[str, Any]) -> None:
    after = copy.deepcopy(facts)
    after["gpurack_gpu"]["gpus"] = []
    result = deltas.counter_deltas(facts, after)[0]
    assert result["verdict"] == "fail" and "missing" in result["reason"]


def test_counter_deltas_rdma_symbol_errors_warn() -> None:
    port = {"device": "mlx5_0", "port": 1, "counters": {"symbol_error": 0, "link_downed": 1}}
    before = {"gpurack_nic": {"rdma": [port]}}
    after = {"gpurack_nic": {"rdma": [{**port, "counters": {"symbol_error": 12, "link_downed": 1}}]}}
    results = deltas.counter_deltas(before, after)
    assert [(r["component"], r["verdict"], r["details"]["deltas"]) for r in results] == [
        ("mlx5_0 port 1", "warn", {"symbol_error": 12})
    ]


def test_regather_failure_skips_counter_check(facts: dict[str, Any]) -> None:
    def broken() -> dict[str, Any]:
        raise RuntimeError("nvidia-smi hung")

    results = deltas.regather(facts, broken, "standard", lambda _: None)
    assert [(r["verdict"], r["reason"]) for r in results] == [
        ("skip", "could not re-read the facts after the run: nvidia-smi hung")
    ]
