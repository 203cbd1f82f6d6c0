"""inventory/example: loads with ansible-inventory, and its pools and expectations are valid.

The expectations are checked twice, as a run checks them: against the preflight role's
argument spec (types, unknown keys) and against the expectations schema of node_checks.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import SCHEMA, validate_expect
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import run_checks as _run_checks
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.node import gather_all
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureSource
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import pool_errors
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import summarise
from conftest import H200X1


def run_checks(facts: Any, expect: Any = None, tier: str = "quick") -> list[dict[str, Any]]:
    """run_checks, its CheckResults in their JSON shape (what node_checks returns)."""
    return [r.to_dict() for r in _run_checks(facts, expect, tier)]


REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "inventory" / "example"
BIN = Path(sys.executable).parent
DOCUMENTATION_NET = ipaddress.ip_network("192.0.2.0/24")
POOLS = {"h100_train_a": 4, "h200_inference": 2}
WORKLOADS = {"distributed-training", "inference", "batch"}
SHARING = {"full-gpu", "mig", "time-slicing"}
TAINT_EFFECTS = {"NoSchedule", "PreferNoSchedule", "NoExecute"}


@pytest.fixture(scope="module")
def inventory() -> dict[str, Any]:
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg")}
    proc = subprocess.run(
        [str(BIN / "ansible-inventory"), "-i", str(EXAMPLE / "hosts.yml"), "--list"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def _hostvars(inventory: dict[str, Any], host: str) -> dict[str, Any]:
    hostvars: dict[str, Any] = inventory["_meta"]["hostvars"][host]
    return hostvars


def _preflight_expect_spec() -> dict[str, Any]:
    specs = yaml.safe_load((REPO / "roles/preflight/meta/argument_specs.yml").read_text())
    spec: dict[str, Any] = specs["argument_specs"]["main"]["options"]["preflight_expect"]
    return spec


def test_groups_and_pools(inventory: dict[str, Any]) -> None:
    assert set(inventory["gpu_nodes"]["children"]) == set(POOLS)
    for pool, count in POOLS.items():
        assert len(inventory[pool]["hosts"]) == count, pool
    assert inventory["kube_control_plane"]["hosts"]
    gpu_hosts = {h for pool in POOLS for h in inventory[pool]["hosts"]}
    assert gpu_hosts.isdisjoint(inventory["kube_control_plane"]["hosts"])


def test_addresses_are_documentation_range(inventory: dict[str, Any]) -> None:
    hostvars = inventory["_meta"]["hostvars"]
    assert hostvars
    for host, hvars in hostvars.items():
        assert ipaddress.ip_address(hvars["ansible_host"]) in DOCUMENTATION_NET, host
    assert "192.0.2.0/24" in (EXAMPLE / "hosts.yml").read_text()


@pytest.mark.parametrize("pool", sorted(POOLS))
def test_pool_definition(inventory: dict[str, Any], pool: str) -> None:
    for host in inventory[pool]["hosts"]:
        spec = _hostvars(inventory, host)["gpurack_pool"]
        assert spec["name"] == pool.replace("_", "-")
        assert spec["workload"] in WORKLOADS
        assert spec["sharing"] in SHARING
        assert {"key": "gpurack.io/pool", "value": spec["name"], "effect": "NoSchedule"} in spec["taints"]
        for taint in spec["taints"]:
            assert set(taint) == {"key", "value", "effect"} and taint["effect"] in TAINT_EFFECTS
        assert pool_errors(spec) == []  # what preflight checks before any change


@pytest.mark.parametrize("pool", sorted(POOLS))
def test_pool_expectations_are_valid(inventory: dict[str, Any], pool: str) -> None:
    validator = ArgumentSpecValidator({"preflight_expect": _preflight_expect_spec()})
    for host in inventory[pool]["hosts"]:
        expect = _hostvars(inventory, host)["gpurack_expect"]
        assert validate_expect(expect) == []
        result = validator.validate({"preflight_expect": expect})
        assert not result.error_messages, result.error_messages


def test_h100_pool_expects_a_full_hgx_board(inventory: dict[str, Any]) -> None:
    expect = _hostvars(inventory, "h100-a-01")["gpurack_expect"]
    assert expect["gpu"]["count"] == 8 and expect["gpu"]["nvlinks_per_gpu"] == 18
    assert expect["rdma"] == {"ports": 8, "rate_gbps": 400, "link_layer": "InfiniBand"}
    assert expect["numa_nodes"] == 2 and expect["nvme"] == {"count": 8}


def test_h200_expect_file_passes_against_the_real_capture() -> None:
    """The `make run` example: the H200 pool's expect.yml against shared/fixtures/hw/h200x1."""
    expect = yaml.safe_load((EXAMPLE / "group_vars/h200_inference/expect.yml").read_text())["gpurack_expect"]
    facts = gather_all(CaptureSource(H200X1))
    results = run_checks(facts, expect, "quick")
    failing = [(r["id"], r["reason"]) for r in results if r["verdict"] == "fail"]
    assert failing == []
    assert summarise(results)["verdict"] in {"pass", "warn"}
    assert {"gpu.count", "gpu.model", "gpu.memory", "numa.nodes"} <= {
        r["id"] for r in results if r["verdict"] == "pass"
    }


def test_role_argument_spec_knows_every_expectation_key() -> None:
    """meta/argument_specs.yml refuses unknown keys, so it must list what node_checks accepts."""

    def keys(node: dict[str, Any], prefix: str = "") -> set[str]:
        out: set[str] = set()
        for key, sub in node.items():
            out.add(prefix + key)
            if isinstance(sub, dict):
                out |= keys(sub, f"{prefix}{key}.")
        return out

    def spec_keys(options: dict[str, Any], prefix: str = "") -> set[str]:
        out: set[str] = set()
        for key, sub in options.items():
            out.add(prefix + key)
            out |= spec_keys(sub.get("options", {}), f"{prefix}{key}.")
        return out

    assert spec_keys(_preflight_expect_spec()["options"]) == keys(dict(SCHEMA))
