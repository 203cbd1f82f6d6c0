"""Role inputs with limits the argument spec cannot express (ranges, lengths), refused first.

Each role runs on this machine (-c local) once, over one local host per case (role_cases):
every bad value fails its own host at the role's first check, naming the variable and the
limit, before anything is installed, probed or joined.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from role_cases import HostRun, role_playbook, run_cases

POOL = {"name": "h200-inference", "workload": "inference", "sharing": "full-gpu"}

NVME_CASES: dict[str, tuple[dict[str, Any], str]] = {
    "chunk_negative": ({"nvme_scratch_md_chunk_kib": -512}, "power of two from 4 to 1048576 (KiB), got -512"),
    "chunk_zero": ({"nvme_scratch_md_chunk_kib": 0}, "got 0;"),
    "chunk_not_power": ({"nvme_scratch_md_chunk_kib": 500}, "got 500;"),
    "chunk_over_1gib": ({"nvme_scratch_md_chunk_kib": 2097152}, "got 2097152;"),
    "label_19": ({"nvme_scratch_fs_label": "gpurack-scratch-fs1"}, '"gpurack-scratch-fs1" (19)'),
    "label_blank": ({"nvme_scratch_fs_label": "a -f"}, '"a -f" (4)'),
    "md_name_33": ({"nvme_scratch_md_name": "m" * 33}, f'"{"m" * 33}" (33)'),
}
TTL_CASES = {"ttl_0": 0, "ttl_negative": -5, "ttl_121": 121, "ttl_string_0": "0"}
FABRIC_CASES = {"mtu_0": 0, "mtu_negative": -1, "mtu_67": 67, "mtu_65521": 65521, "mtu_string": "90000"}


@pytest.fixture(scope="module")
def nvme_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, HostRun]:
    tmp = tmp_path_factory.mktemp("nvme")
    runs, _ = run_cases(tmp, role_playbook(tmp, "nvme_scratch"), {k: v for k, (v, _) in NVME_CASES.items()})
    return runs


@pytest.mark.parametrize("case", sorted(NVME_CASES))
def test_nvme_scratch_refuses_what_mdadm_and_xfs_cannot_take(
    nvme_runs: dict[str, HostRun], case: str
) -> None:
    run = nvme_runs[case]
    assert run.failed_task is not None and "Refuse chunk sizes, names and labels" in run.failed_task, run
    assert NVME_CASES[case][1] in run.message
    assert not run.ran("Check the platform")  # nothing installed or probed


@pytest.fixture(scope="module")
def join_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, HostRun]:
    tmp = tmp_path_factory.mktemp("join")
    cases: dict[str, dict[str, Any]] = {
        name: {"kubeadm_join_token_ttl_minutes": ttl, "gpurack_pool": POOL} for name, ttl in TTL_CASES.items()
    }
    cases["bad-pool"] = {"gpurack_pool": {**POOL, "wrkload": "batch", "name": "H200 Inference"}}
    cases |= {name: {"gpurack_pool": POOL} for name in NODE_NAME_CASES}
    runs, _ = run_cases(tmp, role_playbook(tmp, "kubeadm_join"), cases)
    return runs


# Inventory host names kubeadm would register as a Node that the API server refuses.
NODE_NAME_CASES = ("GPU-01", "gpu_01", "gpu-01.", "g" * 254)


@pytest.mark.parametrize("case", NODE_NAME_CASES)
def test_kubeadm_join_refuses_a_host_kubernetes_would_refuse_as_a_node(
    join_runs: dict[str, HostRun], case: str
) -> None:
    run = join_runs[case]
    assert run.failed_task is not None and "Refuse a host whose name Kubernetes" in run.failed_task, run
    assert "inventory host name: " in run.message and "must be a DNS subdomain" in run.message
    assert not run.ran("Derive labels and taints")


@pytest.mark.parametrize("case", sorted(TTL_CASES))
def test_kubeadm_join_refuses_a_token_ttl_outside_1_to_120(join_runs: dict[str, HostRun], case: str) -> None:
    run = join_runs[case]
    assert run.failed_task is not None and "Refuse a bootstrap token that never expires" in run.failed_task, (
        run
    )
    assert "kubeadm_join_token_ttl_minutes must be 1 to 120 (minutes; kubeadm reads 0 as never" in run.message
    assert f"got {TTL_CASES[case]}" in run.message
    assert not run.ran("Derive labels and taints")


def _assert_bad_pool_refused(run: HostRun, role: str, host: str = "bad_pool") -> None:
    assert run.failed_task is not None and "Refuse a bad pool" in run.failed_task, run
    assert f"{role}_pool (gpurack_pool) of {host} is invalid" in run.message
    assert "unknown key 'wrkload' (did you mean 'workload'?)" in run.message
    assert "pool.name: 'H200 Inference' must be a DNS label" in run.message
    assert not run.ran("Gather the GPU and NIC facts")


def test_kubeadm_join_refuses_a_bad_pool_before_reading_facts(join_runs: dict[str, HostRun]) -> None:
    """join.yml can run without preflight: the roles that label check the pool again, by the same rules."""
    _assert_bad_pool_refused(join_runs["bad-pool"], "kubeadm_join", "bad-pool")


def test_node_labels_refuses_a_bad_pool_before_reading_facts(tmp_path: Path) -> None:
    runs, _ = run_cases(
        tmp_path,
        role_playbook(tmp_path, "node_labels"),
        {"bad_pool": {"gpurack_pool": {**POOL, "wrkload": "batch", "name": "H200 Inference"}}},
    )
    _assert_bad_pool_refused(runs["bad_pool"], "node_labels")


@pytest.fixture(scope="module")
def fabric_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, HostRun]:
    tmp = tmp_path_factory.mktemp("fabric")
    cases: dict[str, dict[str, Any]] = {
        name: {"fabric_interfaces": [{"name": "ib0", "mtu": 4092}, {"name": "ib1", "mtu": mtu}]}
        for name, mtu in FABRIC_CASES.items()
    }
    cases["in_range"] = {
        "fabric_interfaces": [{"name": "ib0", "mtu": 68}, {"name": "ib1", "mtu": 65520}, {"name": "eth1"}]
    }
    runs, _ = run_cases(tmp, role_playbook(tmp, "fabric"), cases)
    return runs


@pytest.mark.parametrize("case", sorted(FABRIC_CASES))
def test_fabric_refuses_an_mtu_outside_68_to_65520(fabric_runs: dict[str, HostRun], case: str) -> None:
    run = fabric_runs[case]
    assert run.failed_task is not None and "Refuse interface MTUs" in run.failed_task, run
    mtu = FABRIC_CASES[case]
    assert (
        f"an MTU must be 68 to 65520 (IPoIB connected mode's maximum), got ib0=4092, ib1={mtu}" in run.message
    )
    assert not run.ran("Load platform variables")


def test_fabric_takes_mtus_in_range(fabric_runs: dict[str, HostRun]) -> None:
    run = fabric_runs["in_range"]
    assert run.ran("Refuse interface MTUs")
    assert "an MTU must be" not in run.message
    # The role went on to its next task (and stops there: there are no facts here).
    assert run.ran("Load platform variables"), run


def test_kubeadm_control_plane_refuses_a_host_kubernetes_would_refuse_as_a_node(tmp_path: Path) -> None:
    runs, _ = run_cases(tmp_path, role_playbook(tmp_path, "kubeadm_control_plane"), {"CP_01": {}})
    run = runs["CP_01"]
    assert run.failed_task is not None and "Refuse a host whose name Kubernetes" in run.failed_task, run
    assert "inventory host name: 'CP_01' must be a DNS subdomain" in run.message
    assert not run.ran("Write the audit policy")
