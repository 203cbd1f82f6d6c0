"""Pool homogeneity (`gpurack inventory outliers`): nodes that differ from most of their pool.

Nodes are the real H200 capture grown into HGX boards (inventory_helpers.hgx_facts), with
the PCIe devices of the public HGX H100 `lspci -vvv` capture (its 8 GPUs, 12 ConnectX functions).
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci import parse_lspci_vvv
from conftest import PUBLIC
from gpurack import hoststate
from gpurack.cli import main
from gpurack.errors import ExitCode
from gpurack.inventory import NodeRecord, RunRecord, SnapshotView, homogeneity, open_store
from gpurack.report import SCHEMA_PATH
from inventory_helpers import hgx_facts, result

LSPCI_HGX = PUBLIC / "lspci-vvv.hgx-h100"


@cache
def _pci_devices() -> list[dict[str, Any]]:
    return parse_lspci_vvv(LSPCI_HGX.read_text())


def node_facts() -> dict[str, Any]:
    """An HGX node: 8 GPUs at x16, 8 active 400 Gb/s ports, the HGX capture's PCIe devices."""
    facts = hgx_facts()
    facts["gpurack_pci"] = {
        "available": True,
        "source": "lspci-vvv",
        "sources": ["lspci -vvv"],
        "devices": copy.deepcopy(_pci_devices()),
        "downgraded": [],
    }
    return facts


def port_down(facts: dict[str, Any], device: str = "mlx5_3") -> dict[str, Any]:
    port = next(p for p in facts["gpurack_nic"]["rdma"] if p["device"] == device)
    port.update(state="DOWN", phys_state="Disabled", rate_gbps=10)
    return facts


def _view(host: str, pool: str | None, facts: dict[str, Any]) -> SnapshotView:
    return SnapshotView(
        host=host,
        pool=pool,
        k8s_node_name=None,
        run_id=1,
        run_kind="validate",
        started=datetime(2026, 12, 1, tzinfo=UTC),
        source="ansible",
        verdict="pass",
        facts=facts,
        labels={},
        results=(),
        state=hoststate.state_from_facts(facts),
    )


def _pool(facts_by_host: dict[str, dict[str, Any]], pool: str = "h200") -> list[SnapshotView]:
    return [_view(host, pool, facts) for host, facts in facts_by_host.items()]


# ---------------------------------------------------------------------------------------------
# pure function


def test_homogeneity_flags_a_port_down_among_peers() -> None:
    nodes = {f"gpu0{i}": node_facts() for i in range(1, 5)}
    port_down(nodes["gpu03"])
    report = homogeneity(_pool(nodes))
    (outlier,) = report.outliers
    assert (outlier.host, outlier.attribute, outlier.value, outlier.majority) == (
        "gpu03",
        "active_rdma_ports",
        "7",
        "8",
    )
    assert (outlier.peers_with_majority, outlier.peers) == (3, 3)
    assert outlier.sentence == "gpu03: active RDMA ports 7; 3 of its 3 peers in pool h200 have 8"
    assert report.splits == ()


def test_homogeneity_all_equal_gives_nothing() -> None:
    report = homogeneity(_pool({f"gpu0{i}": node_facts() for i in range(1, 4)}))
    assert (report.outliers, report.splits) == ((), ())
    assert report.pools[0].hosts == ("gpu01", "gpu02", "gpu03")


def test_homogeneity_two_nodes_that_differ_is_a_split_not_an_outlier() -> None:
    report = homogeneity(_pool({"gpu01": node_facts(), "gpu02": port_down(node_facts())}))
    assert report.outliers == ()
    (split,) = report.splits
    assert split.values == (("7", ("gpu02",)), ("8", ("gpu01",)))
    assert split.sentence == (
        "pool h200: no majority for active RDMA ports (gpu02: 7; gpu01: 8), so no node is flagged"
    )


def test_homogeneity_even_split_of_four_is_said() -> None:
    nodes = {f"gpu0{i}": node_facts() for i in range(1, 5)}
    for host in ("gpu03", "gpu04"):
        nodes[host]["gpurack_gpu"]["driver_version"] = "575.57.08"
    report = homogeneity(_pool(nodes))
    assert report.outliers == ()
    assert [(s.attribute, s.values) for s in report.splits] == [
        ("driver", (("575.57.08", ("gpu03", "gpu04")), ("580.159.04", ("gpu01", "gpu02"))))
    ]


def test_homogeneity_reads_gpu_count_pcie_widths_rates_and_driver() -> None:
    nodes = {f"gpu0{i}": node_facts() for i in range(1, 6)}
    nodes["gpu01"]["gpurack_gpu"]["gpus"].pop()
    nodes["gpu02"]["gpurack_gpu"]["gpus"][5]["pcie"]["width_current"] = 8
    nic = next(d for d in nodes["gpu03"]["gpurack_pci"]["devices"] if d["bus_id"] == "0000:1a:00.0")
    nic["link"]["sta_width"] = 8
    nodes["gpu04"]["gpurack_nic"]["rdma"][0]["rate_gbps"] = 200
    nodes["gpu05"]["gpurack_gpu"]["driver_version"] = "575.57.08"
    report = homogeneity(_pool(nodes))
    assert [(o.host, o.attribute, o.value, o.majority) for o in report.outliers] == [
        ("gpu01", "gpu_count", "7", "8"),
        ("gpu02", "gpu_pcie_widths", "x16, x8", "x16"),
        ("gpu03", "nic_pcie_widths", "x16, x8", "x16"),
        ("gpu04", "rdma_port_rates", "400 Gb/s, 200 Gb/s", "400 Gb/s"),
        ("gpu05", "driver", "575.57.08", "580.159.04"),
    ]
    assert all((o.peers_with_majority, o.peers) == (4, 4) for o in report.outliers)
    assert (
        report.outliers[1].sentence
        == "gpu02: GPU PCIe link widths x16, x8; 4 of its 4 peers in pool h200 have x16"
    )


def test_homogeneity_leaves_out_unknown_values_and_unpooled_nodes() -> None:
    nodes = {f"gpu0{i}": node_facts() for i in range(1, 4)}
    del nodes["gpu03"]["gpurack_pci"]
    nodes["gpu03"]["gpurack_nic"] = {"available": False, "reason": "no /sys/class/infiniband", "rdma": []}
    views = [*_pool(nodes), _view("spare", None, port_down(node_facts()))]
    report = homogeneity(views)
    assert (report.outliers, report.splits, report.unpooled) == ((), (), ("spare",))


def test_homogeneity_pools_are_compared_apart() -> None:
    views = _pool({"a1": node_facts(), "a2": node_facts(), "a3": node_facts()}, "hgx")
    views += _pool({"b1": port_down(node_facts())}, "other")
    report = homogeneity(views)
    assert [p.pool for p in report.pools] == ["hgx", "other"]
    assert report.outliers == ()


# ---------------------------------------------------------------------------------------------
# CLI over a recorded inventory


def _record(url: str, nodes: dict[str, tuple[str | None, dict[str, Any]]], day: int = 1) -> None:
    # The pool's expectations count GPUs only: every check passes, the port down included.
    with open_store(url) as store:
        store.record(
            RunRecord("validate", started=datetime(2026, 11, day, 12, tzinfo=UTC)),
            [
                NodeRecord(host, pool, "ansible", facts, results=[result("gpu.count", "pass")])
                for host, (pool, facts) in nodes.items()
            ],
        )


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """Pool h200: gpu03 has one RDMA port down in its latest run; pool solo has one node."""
    url = str(tmp_path / "inventory.db")
    nodes: dict[str, tuple[str | None, dict[str, Any]]] = {
        f"gpu0{i}": ("h200", node_facts()) for i in range(1, 5)
    }
    nodes["solo1"] = ("solo", node_facts())
    _record(url, nodes, day=1)
    # A later run that saw gpu03 only: its latest snapshot is the one compared.
    _record(url, {"gpu03": ("h200", port_down(node_facts()))}, day=2)
    return url


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_outliers_flags_the_port_down_and_exits_1(
    capsys: pytest.CaptureFixture[str], db_url: str
) -> None:
    code, out, err = _run(capsys, "inventory", "outliers", "--db", db_url)
    assert (code, err) == (ExitCode.FAILED, "")
    assert out.splitlines() == [
        "pool h200 (4 nodes): 1 outlier",
        "  - gpu03: active RDMA ports 7; 3 of its 3 peers in pool h200 have 8",
        "pool solo (1 node): one node, nothing to compare",
    ]


def test_cli_outliers_json(capsys: pytest.CaptureFixture[str], db_url: str) -> None:
    code, out, _ = _run(capsys, "inventory", "outliers", "--db", db_url, "--json", "--pool", "h200")
    data = json.loads(out)
    assert code == ExitCode.FAILED
    assert data["outliers"] == 1
    (pool,) = data["pools"]
    assert pool["hosts"] == ["gpu01", "gpu02", "gpu03", "gpu04"]
    assert pool["outliers"][0] | {"sentence": ""} == {
        "pool": "h200",
        "host": "gpu03",
        "attribute": "active_rdma_ports",
        "value": "7",
        "majority": "8",
        "peers_with_majority": 3,
        "peers": 3,
        "sentence": "",
    }


def test_cli_outliers_latest_record_wins(capsys: pytest.CaptureFixture[str], db_url: str) -> None:
    _record(db_url, {"gpu03": ("h200", node_facts())}, day=3)
    code, out, _ = _run(capsys, "inventory", "outliers", "--db", db_url, "--pool", "h200")
    assert (code, out) == (ExitCode.OK, "pool h200 (4 nodes): homogeneous\n")


def test_cli_outliers_tie_is_said_and_exits_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    url = str(tmp_path / "tie.db")
    _record(url, {"gpu01": ("pair", node_facts()), "gpu02": ("pair", port_down(node_facts()))})
    code, out, _ = _run(capsys, "inventory", "outliers", "--db", url)
    assert code == ExitCode.OK
    assert out.splitlines() == [
        "pool pair (2 nodes): no outlier, but no majority on 1 attribute",
        "  - pool pair: no majority for active RDMA ports (gpu02: 7; gpu01: 8), so no node is flagged",
    ]


def test_cli_outliers_unknown_pool_exits_64(capsys: pytest.CaptureFixture[str], db_url: str) -> None:
    code, _, err = _run(capsys, "inventory", "outliers", "--db", db_url, "--pool", "nope")
    assert code == ExitCode.USAGE
    assert err == "gpurack: no node recorded in pool 'nope' (pools: h200, solo)\n"


# ---------------------------------------------------------------------------------------------
# in the run report


def test_report_of_a_run_names_its_pool_outliers(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    url = str(tmp_path / "report.db")
    nodes: dict[str, tuple[str | None, dict[str, Any]]] = {
        f"gpu0{i}": ("h200", node_facts()) for i in range(1, 4)
    }
    port_down(nodes["gpu02"][1])
    _record(url, nodes)
    out_dir = tmp_path / "report"
    code, _, err = _run(capsys, "report", "latest", "--db", url, "--output", str(out_dir))
    assert (code, err) == (ExitCode.OK, "")
    doc = json.loads((out_dir / "report.json").read_text())
    jsonschema.validate(doc, json.loads(SCHEMA_PATH.read_text()))
    sentence = "gpu02: active RDMA ports 7; 2 of its 2 peers in pool h200 have 8"
    assert [o["sentence"] for o in doc["homogeneity"]["outliers"]] == [sentence]
    assert doc["homogeneity"]["splits"] == []
    assert f"## Pool homogeneity\n\n- {sentence}\n" in (out_dir / "report.md").read_text()
    assert f"<li>{sentence}</li>" in (out_dir / "report.html").read_text()


def test_report_of_a_homogeneous_run_has_no_pool_section(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = str(tmp_path / "report.db")
    _record(url, {f"gpu0{i}": ("h200", node_facts()) for i in range(1, 4)})
    out_dir = tmp_path / "report"
    assert _run(capsys, "report", "latest", "--db", url, "--output", str(out_dir))[0] == ExitCode.OK
    assert json.loads((out_dir / "report.json").read_text())["homogeneity"] == {"outliers": [], "splits": []}
    assert "Pool homogeneity" not in (out_dir / "report.md").read_text()
    assert "Pool homogeneity" not in (out_dir / "report.html").read_text()
