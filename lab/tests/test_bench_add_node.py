"""The add-one-node benchmark's fake Nodes, kwok's arguments and its table from given figures (no
Docker, no lab, no kwok)."""

from __future__ import annotations

import importlib
import ipaddress
import sys
from pathlib import Path
from types import ModuleType

from gpurack_lab.scale_plane import KWOK_CIDR, kwok_argv

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _bench() -> ModuleType:
    """lab/benchmarks/bench_add_node.py as a module (the benchmarks import each other by name)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    return importlib.import_module("bench_add_node")


def test_a_fake_node_keeps_ordinary_pods_off_and_carries_the_derived_labels() -> None:
    bench = _bench()
    derived = {
        "name": "lab-l7",
        "labels": {"gpurack.io/pool": "lab-hgx-h100x8-ib", "kubernetes.io/hostname": "lab-l7"},
        "taints": [{"key": "gpurack.io/pool", "value": "inference", "effect": "NoSchedule"}],
    }
    node = bench.lab_fake_node(derived, 300)
    assert node["metadata"]["annotations"] == {"kwok.x-k8s.io/node": "fake"}
    assert node["spec"]["taints"] == [
        {"key": "gpurack.io/pool", "value": "inference", "effect": "NoSchedule"},
        {"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"},
    ]
    assert node["metadata"]["labels"]["gpurack.io/pool"] == "lab-hgx-h100x8-ib"
    assert node["metadata"]["labels"]["kubernetes.io/os"] == "linux"
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "8"
    assert node["spec"]["podCIDR"] == "10.129.44.0/24" and node["spec"]["podCIDRs"] == ["10.129.44.0/24"]
    assert derived["taints"] == [{"key": "gpurack.io/pool", "value": "inference", "effect": "NoSchedule"}]


def test_fake_pod_cidrs_are_distinct_and_outside_the_lab_pod_subnet() -> None:
    bench = _bench()
    cidrs = [ipaddress.ip_network(bench.pod_cidr(i)) for i in range(1000)]
    assert len(set(cidrs)) == 1000
    kwok, lab = ipaddress.ip_network(KWOK_CIDR), ipaddress.ip_network("10.244.0.0/16")
    assert all(c.subnet_of(kwok) and not c.overlaps(lab) for c in cidrs)


def test_kwok_manages_only_the_annotated_nodes_with_the_builds_stages(tmp_path: Path) -> None:
    argv = kwok_argv(tmp_path / "bin", tmp_path / "admin.conf")
    assert argv[0] == str(tmp_path / "bin" / "kwok")
    assert f"--kubeconfig={tmp_path / 'admin.conf'}" in argv
    assert f"--config={tmp_path / 'manifests' / 'kwok-stages.yaml'}" in argv
    assert "--manage-all-nodes=false" in argv
    assert "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake" in argv


def test_the_lab_grows_with_the_argv_of_the_lab_tests() -> None:
    assert _bench().up_argv(3) == [
        "lab", "up", "--workers", "3", "--profile", "h200x1", "--profile", "hgx-h100x8-ib", "--kubernetes",
    ]  # fmt: skip


def _figures(add_node: float, ready: bool = True) -> object:
    return _bench().Figures(
        nodes=1000, lab_up=80.0, first_site=190.0, first_hosts=3, grow=30.0, registered=9.5,
        ready_after=2.5, ready=1000, add_node=add_node, add_hosts=["lab-cp1", "lab-w3"],
        new_node_ready=ready, pods_on_fake=2000,
    )  # fmt: skip


def test_the_table_sets_the_limit_run_beside_kubesprays_60_minutes() -> None:
    table = dict(_bench().rows(_figures(240.0), 16))
    assert table["site --limit lab-w3 (lab-cp1, lab-w3), beside 1,000 Nodes"] == "240.0 s (4.0 min)"
    assert table["kubespray#10449: about 60 min to add one node to a 1,000-node cluster"] == "60 min"
    assert table["--limit lab-w3 run / kubespray#10449's 60 min"] == "0.067 (15x shorter)"
    assert table["goal: at most 6 min"] == "met (4.0 min)"
    assert table["lab-w3 a Ready Node"] == "yes"
    assert table["register 1,000 Nodes (POST, 16 at a time)"] == "9.5 s"
    assert table["kwok: all Ready, after registering"] == "2.5 s (1,000 Ready)"
    assert table["site, first run (3 hosts)"] == "190.0 s"
    assert any("pods on the fake Nodes" in what and value == "2,000" for what, value in table.items())


def test_a_run_over_six_minutes_misses_the_goal() -> None:
    bench = _bench()
    assert bench.verdict(420.0) == ("0.117 (9x shorter)", "missed (7.0 min)")
    assert bench.verdict(360.0)[1] == "met (6.0 min)"
    assert dict(bench.rows(_figures(420.0, ready=False), 16))["lab-w3 a Ready Node"] == "no"
