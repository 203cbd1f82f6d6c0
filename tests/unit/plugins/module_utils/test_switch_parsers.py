"""Switch parsers: EOS and NX-OS outputs (tests/fixtures/switch) through ntc-templates into one view."""

from __future__ import annotations

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch import config_text
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.intent import PortIntent
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.model import (
    Neighbor,
    Port,
    RoceSettings,
    SwitchOutputError,
    canonical_port,
    parse_speed,
    view_from_dict,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.platforms import (
    UnknownPlatformError,
    platform_for,
)
from switch_outputs import OUTPUTS, outputs, view


@pytest.mark.parametrize(
    ("name", "canonical"),
    [("Et1", "Ethernet1"), ("Eth1/3", "Ethernet1/3"), ("ethernet49/1", "Ethernet49/1"), ("mgmt0", "mgmt0")],
)
def test_port_names_are_spelt_as_the_running_config_spells_them(name: str, canonical: str) -> None:
    assert canonical_port(name) == canonical


@pytest.mark.parametrize(
    ("text", "gbps"), [("400G", 400), ("a-100G", 100), ("25Gbps", 25), ("1000M", 1), ("auto", None)]
)
def test_speed_columns_read_in_gbps(text: str, gbps: float | None) -> None:
    assert parse_speed(text) == gbps


def test_eos_view_has_ports_neighbours_and_roce_settings() -> None:
    leaf1 = view("arista_eos", "leaf1")
    assert leaf1.ports["Ethernet1"] == Port(
        "Ethernet1", True, True, 400.0, 9214, input_errors=3, output_errors=0, description="gpu01 mlx5_0"
    )
    assert leaf1.ports["Ethernet2"] == Port("Ethernet2", False, False, 100.0, 1500, 0, 0, "")
    assert leaf1.neighbors == (
        Neighbor("Ethernet1", "gpu01", "mlx5_0"),
        Neighbor("Ethernet49/1", "spine1", "Ethernet1/1"),
    )
    assert leaf1.roce["Ethernet1"] == RoceSettings(pfc=True, pfc_priorities=(3,), ecn=True)
    assert leaf1.roce["Ethernet2"] == RoceSettings()


def test_nxos_view_has_ports_neighbours_and_roce_settings() -> None:
    leaf2 = view("cisco_nxos", "leaf2")
    assert leaf2.ports["Ethernet1/1"] == Port("Ethernet1/1", True, True, 400.0, 9216, 0, 0, "gpu02 mlx5_0")
    assert not leaf2.ports["Ethernet1/2"].admin_up and not leaf2.ports["Ethernet1/2"].oper_up
    assert leaf2.neighbors == (
        Neighbor("Ethernet1/1", "gpu02", "mlx5_0"),
        Neighbor("Ethernet1/3", "gpu01", "mlx5_1"),
    )
    # NX-OS keeps the lossless class in the QoS policy: PFC and ECN, no per-port priority.
    assert leaf2.roce["Ethernet1/1"] == RoceSettings(pfc=True, ecn=True)
    assert "mgmt0" in leaf2.port_config and leaf2.roce["Ethernet1/2"] == RoceSettings()


@pytest.mark.parametrize(("platform", "name"), [("arista_eos", "leaf1"), ("cisco_nxos", "leaf2")])
def test_a_view_round_trips_through_its_dict(platform: str, name: str) -> None:
    parsed = view(platform, name)
    assert view_from_dict(parsed.to_dict()) == parsed


def test_output_that_matches_no_template_names_the_command() -> None:
    broken = {
        **outputs("arista_eos"),
        "show lldp neighbors": "Port  Neighbor Device ID  Neighbor Port ID  TTL\n---------- ---\nEt1\n",
    }
    with pytest.raises(SwitchOutputError, match="arista_eos 'show lldp neighbors': output not understood"):
        platform_for("arista_eos").parse("leaf1", broken)


@pytest.mark.parametrize(
    ("spelling", "name"),
    [("arista.eos.eos", "arista_eos"), ("cisco_nxos", "cisco_nxos"), ("nxos", "cisco_nxos")],
)
def test_platforms_are_found_by_either_spelling(spelling: str, name: str) -> None:
    assert platform_for(spelling).name == name


def test_an_unknown_platform_lists_the_known_ones() -> None:
    with pytest.raises(
        UnknownPlatformError, match="unknown switch platform 'junos'; gpurack reads arista_eos, cisco_nxos"
    ):
        platform_for("junos")


def test_running_config_sections_keep_nested_modes_under_their_setting() -> None:
    sections = config_text.interface_sections(
        (OUTPUTS / "arista_eos" / "show_running-config.txt").read_text()
    )
    assert sections["Ethernet1"][-1] == (
        "tx-queue 3",
        ("random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes",),
    )
    assert sections["Ethernet2"] == (("shutdown", ()),)
    assert "hostname leaf1" not in str(sections)


ROCE_PORT = PortIntent("Ethernet2", "gpu01 mlx5_1", mtu=9214, speed_gbps=400, pfc_priority=3, ecn=True)


def test_eos_intent_of_a_roce_port() -> None:
    assert platform_for("arista_eos").intended(ROCE_PORT) == (
        ("description gpu01 mlx5_1", ()),
        ("mtu 9214", ()),
        ("speed forced 400gfull", ()),
        ("priority-flow-control on", ()),
        ("priority-flow-control priority 3 no-drop", ()),
        ("tx-queue 3", ("random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes",)),
    )


def test_nxos_intent_attaches_the_roce_policies_and_sets_speed_in_mbps() -> None:
    blocks = platform_for("cisco_nxos").intended(ROCE_PORT)
    assert ("speed 400000", ()) in blocks
    assert ("priority-flow-control mode on", ()) in blocks
    assert ("service-policy type queuing output gpurack-roce-ecn", ()) in blocks


def test_a_port_without_roce_gets_description_and_mtu_only() -> None:
    plain = PortIntent("Ethernet3", "gpu03 eth2", mtu=9000)
    assert platform_for("arista_eos").intended(plain) == (("description gpu03 eth2", ()), ("mtu 9000", ()))


def test_what_is_missing_and_what_the_section_becomes() -> None:
    running = config_text.interface_sections((OUTPUTS / "arista_eos" / "show_running-config.txt").read_text())
    intended = platform_for("arista_eos").intended(ROCE_PORT)
    assert config_text.missing(intended, running["Ethernet2"]) == list(intended)
    after = config_text.after(intended, running["Ethernet2"])
    assert after == [*intended, ("shutdown", ())]
    # The port already set as intended (leaf1 Ethernet1 for gpu01 mlx5_0) lacks nothing.
    done = PortIntent("Ethernet1", "gpu01 mlx5_0", mtu=9214, speed_gbps=400, pfc_priority=3, ecn=True)
    assert config_text.missing(platform_for("arista_eos").intended(done), running["Ethernet1"]) == []


def test_an_intended_value_replaces_the_running_one_of_the_same_setting() -> None:
    running = (("mtu 1500", ()), ("description old", ()), ("no switchport", ()))
    intended = (("description gpu01 mlx5_1", ()), ("mtu 9214", ()))
    assert config_text.after(intended, running) == [*intended, ("no switchport", ())]
    assert (
        config_text.setting_key("priority-flow-control priority 3 no-drop")
        == "priority-flow-control priority 3"
    )
    assert config_text.setting_key("service-policy type qos input x") == "service-policy type qos"


def test_config_commands_leave_a_nested_mode_after_its_lines() -> None:
    commands = config_text.config_commands("Ethernet2", platform_for("arista_eos").intended(ROCE_PORT))
    assert commands[0] == "interface Ethernet2"
    assert commands[-3:] == [
        "tx-queue 3",
        "random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes",
        "exit",
    ]


def test_section_text_is_indented_as_the_switch_prints_it() -> None:
    text = config_text.section_text("Ethernet2", (("mtu 9214", ()), ("tx-queue 3", ("random-detect ecn",))))
    assert text == "interface Ethernet2\n   mtu 9214\n   tx-queue 3\n      random-detect ecn\n"
