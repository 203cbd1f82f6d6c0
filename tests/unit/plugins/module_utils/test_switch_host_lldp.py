"""The server's own LLDP (lldpcli json0) and the host-side cabling check."""

from __future__ import annotations

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import Verdict
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.checks import check_host_lldp
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.host_lldp import (
    HostNeighbor,
    parse_neighbors,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import SwitchOutputError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.plan import read_cabling
from switch_outputs import OUTPUTS

JSON0 = (OUTPUTS / "host" / "lldpcli_json0.json").read_text()
PLAN = {
    "mlx5_0": {"switch": "leaf1", "port": "Ethernet1", "lldp_port_id": "ens1f0np0"},
    "mlx5_1": {"switch": "leaf1", "port": "Ethernet2", "lldp_port_id": "ens1f1np1"},
    "mlx5_2": {"switch": "leaf1", "port": "Ethernet3", "lldp_port_id": "ens2f0np0"},
}


def test_each_interface_gives_its_neighbours_system_and_canonical_port() -> None:
    assert parse_neighbors(JSON0) == [
        HostNeighbor("ens1f0np0", "leaf1", "Ethernet1"),
        HostNeighbor("ens1f1np1", "leaf2", "Ethernet1/3"),
        HostNeighbor("eno1", "oob-sw1", "ge-0/0/11"),
    ]


def test_no_neighbour_at_all_is_an_empty_list() -> None:
    assert parse_neighbors("") == []
    assert parse_neighbors('{"lldp": [{}]}') == []


@pytest.mark.parametrize("text", ["not json", '{"lldp": {}}', "[]"])
def test_output_that_is_not_json0_is_refused(text: str) -> None:
    with pytest.raises(SwitchOutputError, match="not lldpcli's json0 output"):
        parse_neighbors(text)


def test_the_host_side_check_names_both_ends_and_skips_interfaces_lldpd_does_not_list() -> None:
    results = check_host_lldp(read_cabling("gpu01", PLAN), parse_neighbors(JSON0))
    by_nic = {r.component: r for r in results}
    assert set(by_nic) == {"mlx5_0", "mlx5_1"}  # ens2f0np0 is not listed: no result
    assert by_nic["mlx5_0"].verdict is Verdict.PASS
    assert by_nic["mlx5_1"].verdict is Verdict.FAIL
    assert by_nic["mlx5_1"].reason == (
        "gpu01 mlx5_1 should be on leaf1 Ethernet2; the host's LLDP (ens1f1np1) shows leaf2 Ethernet1/3"
    )
