"""Pool sharing settings and the resources a node of the pool advertises (module_utils/labels/sharing.py)."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import pool_errors
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.sharing import (
    SharingError,
    mig_profiles,
    pool_gpu_resources,
    settings_errors,
    sharing_errors,
    time_slicing,
)

BASE = {"name": "p", "workload": "inference"}
FULL = {**BASE, "sharing": "full-gpu"}
SLICED = {**BASE, "sharing": "time-slicing", "time_slicing": {"replicas": 4}}
RENAMED = {**SLICED, "time_slicing": {"replicas": 3, "rename_by_default": True}}
MIG = {**BASE, "sharing": "mig", "mig": {"profiles": {"1g.18gb": 7}}}
MIG_MIXED = {**BASE, "sharing": "mig", "mig": {"profiles": {"3g.71gb": 1, "2g.35gb": 1, "1g.18gb": 2}}}


@pytest.mark.parametrize(
    ("pool", "gpus", "expected"),
    [
        (FULL, 8, {"nvidia.com/gpu": 8}),
        (SLICED, 8, {"nvidia.com/gpu": 32}),
        (RENAMED, 2, {"nvidia.com/gpu.shared": 6}),
        (MIG, 1, {"nvidia.com/mig-1g.18gb": 7}),
        (MIG, 8, {"nvidia.com/mig-1g.18gb": 56}),
        (
            MIG_MIXED,
            8,
            {f"nvidia.com/mig-{p}": n for p, n in (("1g.18gb", 16), ("2g.35gb", 8), ("3g.71gb", 8))},
        ),
        (FULL, 0, {}),
        (MIG, 0, {}),
    ],
)
def test_pool_gpu_resources_is_what_the_device_plugin_advertises(
    pool: dict[str, Any], gpus: int, expected: dict[str, int]
) -> None:
    assert pool_gpu_resources(pool, gpus) == expected


def test_pool_gpu_resources_single_strategy_names_mig_devices_gpus() -> None:
    assert pool_gpu_resources(MIG, 8, "single") == {"nvidia.com/gpu": 56}
    with pytest.raises(SharingError, match="single MIG strategy needs one profile"):
        pool_gpu_resources(MIG_MIXED, 8, "single")
    with pytest.raises(SharingError, match="must be single or mixed"):
        pool_gpu_resources(MIG, 8, "none")


@pytest.mark.parametrize(
    ("pool", "message"),
    [
        ({**BASE, "sharing": "time-slicing"}, "time-slicing needs pool.time_slicing.replicas"),
        ({**BASE, "sharing": "mig"}, "mig needs pool.mig.profiles"),
    ],
)
def test_a_sharing_mode_without_its_numbers_cannot_say_what_it_advertises(
    pool: dict[str, Any], message: str
) -> None:
    assert sharing_errors(pool) == []  # a valid pool: only what needs the numbers asks for them
    assert pool_errors(pool) == []
    with pytest.raises(SharingError, match=f"pool p: .*{message}"):
        pool_gpu_resources(pool, 8)


@pytest.mark.parametrize(
    ("pool", "message"),
    [
        ({**FULL, "time_slicing": {"replicas": 4}}, "pool.time_slicing is only for sharing: time-slicing"),
        ({**FULL, "mig": {"profiles": {"1g.18gb": 7}}}, "pool.mig is only for sharing: mig"),
        ({**SLICED, "time_slicing": {"replicas": 1}}, "replicas must be an integer of at least 2, got 1"),
        ({**SLICED, "time_slicing": {"replicas": True}}, "an integer of at least 2, got True"),
        ({**SLICED, "time_slicing": {"replicas": "4"}}, "got '4'"),
        ({**SLICED, "time_slicing": {"replicas": 4, "rename": True}}, "unknown key 'rename'"),
        ({**SLICED, "time_slicing": {"replicas": 4, "rename_by_default": "y"}}, "rename_by_default must be"),
        ({**SLICED, "time_slicing": 4}, "pool.time_slicing must be a mapping"),
        ({**MIG, "mig": {"profiles": {}}}, "pool.mig.profiles must map MIG profiles"),
        ({**MIG, "mig": {"profiles": {"1g.18gb": 8}}}, "take 8 compute slices per GPU; a GPU has 7"),
        ({**MIG, "mig": {"profiles": {"4g.71gb": 2}}}, "take 8 compute slices"),
        ({**MIG, "mig": {"profiles": {"1g18gb": 7}}}, "'1g18gb' is not a MIG profile"),
        ({**MIG, "mig": {"profiles": {"1g.10gb+me": 1}}}, "is not a MIG profile"),
        ({**MIG, "mig": {"profiles": {"1g.18gb": 0}}}, "must be a positive integer (per GPU), got 0"),
        ({**MIG, "mig": {"profile": {"1g.18gb": 7}}}, "unknown key 'profile'"),
    ],
)
def test_sharing_errors_name_the_key(pool: dict[str, Any], message: str) -> None:
    errors = sharing_errors(pool)
    assert any(message in e for e in errors), errors
    assert any(message in e for e in pool_errors(pool))  # the one set of pool rules includes them
    assert settings_errors(pool)


def test_valid_sharing_settings_pass_the_pool_rules() -> None:
    for pool in (FULL, SLICED, MIG, MIG_MIXED):
        assert pool_errors(pool) == []


def test_time_slicing_and_mig_profiles_read_the_settings() -> None:
    assert time_slicing(SLICED) == (4, False)
    assert mig_profiles(MIG_MIXED) == {"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1}
    with pytest.raises(SharingError, match="does not share GPUs by time-slicing"):
        time_slicing(FULL)
    with pytest.raises(SharingError, match="does not partition GPUs with MIG"):
        mig_profiles(SLICED)
