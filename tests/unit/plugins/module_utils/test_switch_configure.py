"""The configuration round trip's plan: which cabled ports differ from their intended settings,
the diff of each, and the config-mode commands; leaf1 and leaf2 of tests/fixtures/switch."""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.config_text import interface_sections
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.configure import (
    all_commands,
    port_changes,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.intent import PortIntent
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.platforms import platform_for
from switch_outputs import outputs

EOS = platform_for("arista_eos")
NXOS = platform_for("cisco_nxos")


def running(platform: str) -> dict[str, tuple[tuple[str, tuple[str, ...]], ...]]:
    return interface_sections(outputs(platform)["show running-config"])


def test_a_port_already_as_intended_needs_no_change() -> None:
    intent = PortIntent("Ethernet1", "gpu01 mlx5_0", mtu=9214, speed_gbps=400, pfc_priority=3, ecn=True)
    assert port_changes(EOS, running("arista_eos"), [intent]) == []


def test_a_port_that_differs_gets_only_the_settings_it_lacks() -> None:
    intent = PortIntent("Ethernet2", "gpu01 mlx5_1", mtu=9214, pfc_priority=3, ecn=False)
    [change] = port_changes(EOS, running("arista_eos"), [intent])
    assert change.port == "Ethernet2"
    assert change.commands == (
        "interface Ethernet2",
        "description gpu01 mlx5_1",
        "mtu 9214",
        "priority-flow-control on",
        "priority-flow-control priority 3 no-drop",
    )
    assert change.before == "interface Ethernet2\n   shutdown\n"
    # The port's own settings (shutdown) stay: gpurack does not enable a port.
    assert change.after.endswith("   shutdown\n") and "   mtu 9214\n" in change.after


def test_a_changed_mtu_replaces_the_running_one_in_the_diff() -> None:
    intent = PortIntent("Ethernet1/1", "gpu02 mlx5_0", mtu=9214, pfc_priority=3, ecn=True)
    [change] = port_changes(NXOS, running("cisco_nxos"), [intent])
    assert "mtu 9216" in change.before and "mtu 9216" not in change.after
    assert change.commands == ("interface Ethernet1/1", "mtu 9214")


def test_nested_settings_are_sent_inside_their_mode() -> None:
    intent = PortIntent("Ethernet9", "gpu03 mlx5_0", pfc_priority=3, ecn=True)
    [change] = port_changes(EOS, {}, [intent])
    assert all_commands([change])[-3:] == [
        "tx-queue 3",
        "random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes",
        "exit",
    ]
    assert change.before == "interface Ethernet9\n"
