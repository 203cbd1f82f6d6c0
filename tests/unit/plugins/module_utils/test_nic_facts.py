"""nic facts: real ibstat outputs and /sys/class/infiniband of H100 hosts, the H200 capture."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    RC_NOT_FOUND,
    CommandOutput,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nic import (
    gather_nic,
    normalize_guid,
    parse_ibstat,
    parse_port_state,
    parse_rate,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import (
    CaptureSource,
    LiveSource,
    Runner,
)
from conftest import H200X1, PUBLIC

IB_TREE = PUBLIC / "sys-class-infiniband-h100"
IBSTAT = {n: PUBLIC / f"ibstat.47.0.h100.all.active.{n}" for n in (0, 1, 2)}
IB_DEVICES = ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9", "mlx5_bond_0"]


def _runner(outputs: Mapping[tuple[str, ...], CommandOutput]) -> Runner:
    def run(argv: Sequence[str]) -> CommandOutput:
        return outputs.get(tuple(argv), CommandOutput(rc=RC_NOT_FOUND, stdout=""))

    return run


def _ibstat(text: str) -> Runner:
    return _runner({("ibstat",): CommandOutput(rc=0, stdout=text)})


def _linked_root(tmp_path: Path) -> Path:
    """A node root whose sys/class/infiniband is the real H100 tree (read-only, by symlink)."""
    (tmp_path / "sys/class").mkdir(parents=True)
    (tmp_path / "sys/class/infiniband").symlink_to(IB_TREE)
    return tmp_path


def _copied_root(tmp_path: Path) -> Path:
    """A node root holding an editable copy of the real H100 infiniband tree."""
    dest = tmp_path / "sys/class/infiniband"
    shutil.copytree(IB_TREE, dest, copy_function=shutil.copyfile)
    for path in [dest, *dest.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return tmp_path


def _by_device(facts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["device"]: e for e in facts["rdma"]}


def test_gather_nic_h200x1_lists_net_without_lo_and_no_rdma() -> None:
    facts = gather_nic(CaptureSource(H200X1))
    assert facts["available"] is True
    assert [n["name"] for n in facts["net"]] == ["eth0", "ifb0", "ifb1"]
    eth0 = facts["net"][0]
    # speed reads -1 on this virtio NIC, and is empty on the ifb devices: both unknown.
    assert eth0 == {
        "name": "eth0",
        "address": "02:fc:00:00:00:01",
        "mtu": 1400,
        "operstate": "up",
        "speed_mbps": None,
    }
    assert all(n["speed_mbps"] is None for n in facts["net"])
    assert facts["rdma"] == []
    assert facts["ibstat_available"] is False  # ibstat.txt holds rc=127


def test_gather_nic_h100_infiniband_tree_reads_ports(tmp_path: Path) -> None:
    facts = gather_nic(LiveSource(_runner({}), _linked_root(tmp_path)))
    ports = _by_device(facts)
    assert list(ports) == IB_DEVICES
    assert facts["ibstat_available"] is False
    for name in IB_DEVICES[:-1]:
        port = ports[name]
        assert (port["port"], port["state"], port["phys_state"]) == (1, "ACTIVE", "LinkUp")
        assert (port["rate_gbps"], port["link_layer"]) == (400, "InfiniBand")
        assert (port["fw_ver"], port["board_id"], port["hca_type"]) == (
            "28.41.1000",
            "MT_0000000838",
            "MT4129",
        )
        assert port["fw_ver"].startswith("28.")
    bond = ports["mlx5_bond_0"]
    assert (bond["link_layer"], bond["rate_gbps"], bond["state"]) == ("Ethernet", 200, "ACTIVE")
    assert (bond["fw_ver"], bond["hca_type"]) == ("32.38.3056", "MT41692")


def test_gather_nic_h100_infiniband_counters_are_ints(tmp_path: Path) -> None:
    facts = gather_nic(LiveSource(_runner({}), _linked_root(tmp_path)))
    counters = _by_device(facts)["mlx5_0"]["counters"]
    assert all(isinstance(v, int) for v in counters.values())
    assert counters["symbol_error"] == 0
    assert counters["link_downed"] == 0
    assert counters["port_rcv_errors"] == 14
    assert counters["port_xmit_data"] == 230442669431839
    assert len(counters) == 21


def test_gather_nic_sysfs_and_ibstat_merge_guids(tmp_path: Path) -> None:
    # ibstat .2 and the infiniband tree come from the same HGX H100 (same CAs and firmware).
    facts = gather_nic(LiveSource(_ibstat(IBSTAT[2].read_text()), _linked_root(tmp_path)))
    assert facts["ibstat_available"] is True
    assert facts["sources"] == ["sys/class/infiniband", "ibstat"]
    mlx5_0 = _by_device(facts)["mlx5_0"]
    assert mlx5_0["node_guid"] == "0x58a2e10300a7820e"
    assert mlx5_0["port_guid"] == "0x58a2e10300a7820e"
    assert mlx5_0["board_id"] == "MT_0000000838"  # sysfs only
    assert isinstance(mlx5_0["counters"], dict)


def test_gather_nic_ibstat_only_fills_rdma(tmp_path: Path) -> None:
    facts = gather_nic(LiveSource(_ibstat(IBSTAT[2].read_text()), tmp_path))
    ports = _by_device(facts)
    assert list(ports) == IB_DEVICES
    assert ports["mlx5_0"]["state"] == "ACTIVE"
    assert ports["mlx5_0"]["counters"] is None
    assert ports["mlx5_0"]["board_id"] is None
    assert facts["available"] is True


@pytest.mark.parametrize(
    ("name", "cas", "layers"),
    [
        # .0 and .1 (the same host, twice): every port is Ethernet (RoCE), 8x400 + 4x100.
        (0, 12, {("Ethernet", 400): 8, ("Ethernet", 100): 4}),
        (1, 12, {("Ethernet", 400): 8, ("Ethernet", 100): 4}),
        # .2: eight 400G InfiniBand HCAs plus the Ethernet bond; indented with spaces, not tabs.
        (2, 9, {("InfiniBand", 400): 8, ("Ethernet", 200): 1}),
    ],
)
def test_parse_ibstat_h100_outputs_count_ports_rates_and_layers(
    name: int, cas: int, layers: dict[tuple[str, int], int]
) -> None:
    parsed = parse_ibstat(IBSTAT[name].read_text())
    assert len(parsed) == cas
    ports = [p for ca in parsed for p in ca["ports"]]
    assert len(ports) == sum(ca["num_ports"] for ca in parsed)
    assert Counter((p["link_layer"], p["rate_gbps"]) for p in ports) == layers
    assert {(p["state"], p["phys_state"]) for p in ports} == {("ACTIVE", "LinkUp")}


def test_parse_ibstat_roce_zero_port_guid_is_null() -> None:
    mlx5_1 = next(ca for ca in parse_ibstat(IBSTAT[0].read_text()) if ca["device"] == "mlx5_1")
    assert mlx5_1["node_guid"] == "0xe8ebd303003307da"
    assert mlx5_1["ports"][0]["port_guid"] is None  # ibstat prints 0x0000000000000000


def test_parse_ibstat_ca_without_ports_raises(tmp_path: Path) -> None:
    copy = tmp_path / "ibstat"
    # Edit: keep only the first CA's header block, up to (not including) "Port 1:".
    text = IBSTAT[2].read_text()
    copy.write_text(text[: text.index("Port 1:")])
    with pytest.raises(FactsError, match=r"ibstat: CA 'mlx5_0' lists no ports"):
        parse_ibstat(copy.read_text())


def test_parse_ibstat_port_count_mismatch_raises(tmp_path: Path) -> None:
    copy = tmp_path / "ibstat"
    # Edit: the first CA claims two ports but lists one.
    copy.write_text(IBSTAT[2].read_text().replace("Number of ports: 1", "Number of ports: 2", 1))
    with pytest.raises(FactsError, match=r"'Number of ports: 2' but 1 port sections"):
        parse_ibstat(copy.read_text())


def test_parse_ibstat_text_before_first_ca_raises() -> None:
    with pytest.raises(FactsError, match="outside any CA"):
        parse_ibstat("ibwarn: something\nCA 'mlx5_0'\n")


def test_gather_nic_port_down_and_rate_200_in_copy_are_reported(tmp_path: Path) -> None:
    root = _copied_root(tmp_path)
    port = root / "sys/class/infiniband/mlx5_0/ports/1"
    # Edit: mlx5_0 port 1 lost its link (state DOWN, phys Disabled) ...
    (port / "state").write_text("1: DOWN\n")
    (port / "phys_state").write_text("3: Disabled\n")
    # ... and mlx5_1 trained at 200 Gb/s (2X NDR) instead of 400.
    (root / "sys/class/infiniband/mlx5_1/ports/1/rate").write_text("200 Gb/sec (2X NDR)\n")
    ports = _by_device(gather_nic(LiveSource(_runner({}), root)))
    assert (ports["mlx5_0"]["state"], ports["mlx5_0"]["phys_state"]) == ("DOWN", "Disabled")
    assert ports["mlx5_1"]["rate_gbps"] == 200
    assert ports["mlx5_4"]["rate_gbps"] == 400


def test_gather_nic_malformed_state_in_copy_raises(tmp_path: Path) -> None:
    root = _copied_root(tmp_path)
    # Edit: a state file without its numeric code.
    (root / "sys/class/infiniband/mlx5_0/ports/1/state").write_text("ACTIVE\n")
    with pytest.raises(FactsError, match=r"mlx5_0/ports/1/state: expected '<code>: <NAME>'"):
        gather_nic(LiveSource(_runner({}), root))


def test_gather_nic_non_integer_counter_in_copy_raises(tmp_path: Path) -> None:
    root = _copied_root(tmp_path)
    # Edit: a counter holding text.
    (root / "sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error").write_text("N/A\n")
    with pytest.raises(FactsError, match=r"counters/symbol_error: expected an integer"):
        gather_nic(LiveSource(_runner({}), root))


@pytest.mark.parametrize(
    ("text", "expected"),
    [("400 Gb/sec (4X NDR)\n", 400), ("200 Gb/sec (2X NDR)", 200), ("2.5 Gb/sec (1X SDR)", 2.5)],
)
def test_parse_rate_sysfs_text_maps_to_gbps(text: str, expected: float) -> None:
    assert parse_rate(text) == expected


def test_parse_rate_without_unit_raises() -> None:
    with pytest.raises(FactsError, match="Gb/sec"):
        parse_rate("fast")


@pytest.mark.parametrize(("text", "expected"), [("4: ACTIVE\n", "ACTIVE"), ("5: LinkUp", "LinkUp")])
def test_parse_port_state_strips_code(text: str, expected: str) -> None:
    assert parse_port_state(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a088:c203:00e3:142a\n", "0xa088c20300e3142a"),
        ("0xA088C20300E3142A", "0xa088c20300e3142a"),
        ("", None),
    ],
)
def test_normalize_guid_forms_map_to_ibstat_form(text: str, expected: str | None) -> None:
    assert normalize_guid(text) == expected
