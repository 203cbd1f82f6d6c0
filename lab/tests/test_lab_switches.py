"""The lab's switches: the cabling generated from the lab plan, the planted faults, and the
switch server's CLI over real SSH (netmiko), including its config mode and saved config."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.config_text import interface_sections
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.platforms import platform_for
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.session import (
    Target,
    netmiko_connect,
    run_commands,
    send_config,
)
from ansible_collections.gpurack.bootstrap.plugins.modules import switch_config
from gpurack.errors import UsageError
from gpurack_lab import fabric_plan, switches
from gpurack_lab.state import LabHost
from module_helpers import run_module

pytest.importorskip("fakenos", reason="fakenos (the dev extra) serves the lab's switches over SSH")


W1 = LabHost("lab-w1", "worker", "172.30.42.11", "h200x1", "lab_h200x1")
W2 = LabHost("lab-w2", "worker", "172.30.42.12", "hgx-h100x8-ib", "lab_hgx_h100x8_ib")


def test_nics_are_cabled_round_robin_over_the_switches() -> None:
    plan = fabric_plan.cabling([W1, W2], 2)
    assert list(plan["lab-w1"]) == ["mlx5_0", "mlx5_1"]  # h200x1's pool expects no RDMA ports: 2
    assert len(plan["lab-w2"]) == 8  # the HGX pool expects 8
    assert plan["lab-w1"]["mlx5_0"] == {"switch": "leaf1", "port": "Ethernet1"}
    assert plan["lab-w1"]["mlx5_1"] == {"switch": "leaf2", "port": "Ethernet1/1"}
    assert plan["lab-w2"]["mlx5_7"] == {"switch": "leaf2", "port": "Ethernet1/5"}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("miscabled", "expected KIND@HOST:NIC"),
        ("miscabled@lab-w1", "expected KIND@HOST:NIC"),
        ("unplugged@lab-w1:mlx5_0", "unknown kind 'unplugged'"),
    ],
)
def test_a_bad_switch_fault_is_a_usage_error(spec: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        fabric_plan.parse_switch_fault(spec)


def test_a_fault_on_a_nic_the_plan_does_not_cable_is_refused() -> None:
    fault = fabric_plan.parse_switch_fault("switch-mtu@lab-w1:mlx5_5")
    with pytest.raises(
        UsageError, match=r"no cabled NIC lab-w1:mlx5_5 \(cabled: lab-w1:mlx5_0, lab-w1:mlx5_1\)"
    ):
        fabric_plan.build_spec([W1], 1, [fault], [1], "pw")


def _port(spec: dict[str, Any], switch: str, port: str) -> dict[str, Any]:
    entry = next(s for s in spec["switches"] if s["name"] == switch)
    return next(p for p in entry["ports"] if p["name"] == port)


def test_faults_change_the_switch_side_of_their_nic() -> None:
    faults = [
        fabric_plan.parse_switch_fault(s)
        for s in ("miscabled@lab-w1:mlx5_1", "switch-mtu@lab-w2:mlx5_0", "switch-port-down@lab-w2:mlx5_3")
    ]
    spec = fabric_plan.build_spec([W1, W2], 2, faults, [1, 2], "pw")
    assert _port(spec, "leaf2", "Ethernet1/1")["neighbor"] is None  # the planned port is empty
    assert _port(spec, "leaf1", "Ethernet64")["neighbor"] == ["lab-w1", "mlx5_1"]
    assert ["mtu 1500", []] in _port(spec, "leaf1", "Ethernet2")["config"]
    assert ["shutdown", []] in _port(spec, "leaf2", "Ethernet1/3")["config"]
    clean = fabric_plan.build_spec([W1, W2], 2, [], [1, 2], "pw")
    assert ["mtu 9214", []] in _port(clean, "leaf1", "Ethernet2")["config"]
    assert clean["fingerprint"] != spec["fingerprint"]


@pytest.fixture
def served() -> Iterator[dict[str, Any]]:
    spec = switches.start([W1, W2], 2, [])
    try:
        yield spec
    finally:
        switches.stop()


def _target(spec: dict[str, Any], name: str) -> tuple[Target, str]:
    entry = next(s for s in spec["switches"] if s["name"] == name)
    return Target(name, "127.0.0.1", entry["port"], spec["username"], spec["password"], 10.0), entry[
        "platform"
    ]


@pytest.mark.parametrize("name", ["leaf1", "leaf2"])
def test_config_mode_changes_what_the_switch_shows_and_a_save_survives_a_restart(
    served: dict[str, Any], name: str
) -> None:
    target, platform_name = _target(served, name)
    platform = platform_for(platform_name)
    port = "Ethernet1" if name == "leaf1" else "Ethernet1/1"
    send_config(
        target, platform.name, [f"interface {port}", "description lab-w1 mlx5_0", "mtu 9000"], netmiko_connect
    )
    view = platform.parse(name, run_commands(target, platform.name, platform.commands, netmiko_connect))
    assert view.ports[port].mtu == 9000
    assert view.ports[port].description == "lab-w1 mlx5_0"
    assert ("mtu 9214", ()) not in interface_sections(
        run_commands(target, platform.name, ("show running-config",), netmiko_connect)["show running-config"]
    )[port]
    # Saved (send_config saves), so a restart of the same plan keeps it.
    switches.start([W1, W2], 2, [])
    again = platform.parse(name, run_commands(target, platform.name, platform.commands, netmiko_connect))
    assert again.ports[port].mtu == 9000
    # Another plan (a fault planted) starts from the plan again.
    switches.start([W1, W2], 2, [fabric_plan.parse_switch_fault("switch-mtu@lab-w2:mlx5_7")])
    fresh = platform.parse(name, run_commands(target, platform.name, platform.commands, netmiko_connect))
    assert fresh.ports[port].mtu == 9214


def test_stop_ends_the_server(served: dict[str, Any]) -> None:
    assert switches.running_pid() is not None
    assert switches.stop() is True
    assert switches.running_pid() is None
    assert switches.stop() is False


def test_switch_config_shows_the_diff_in_check_mode_applies_then_changes_nothing(
    served: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The module against leaf2 (NX-OS) over SSH: the lab's ports start without descriptions."""
    target, platform_name = _target(served, "leaf2")
    ports = [
        {"port": "Ethernet1/1", "description": "lab-w1 mlx5_1", "mtu": 9214, "pfc_priority": 3, "ecn": True},
        {"port": "Ethernet1/2", "description": "lab-w2 mlx5_1", "mtu": 9214, "speed_gbps": 400},
    ]
    args = {
        "name": "leaf2",
        "host": target.host,
        "port": target.port,
        "username": target.username,
        "password": target.password,
        "network_os": platform_name,
        "timeout": 10,
        "ports": ports,
    }
    dry = run_module(monkeypatch, capsys, "switch_config", **args, _ansible_check_mode=True)
    assert dry["changed"] is True and dry["changed_ports"] == ["Ethernet1/1", "Ethernet1/2"]
    assert "description" not in dry["diff"][0]["before"]
    assert "   description lab-w1 mlx5_1\n" in dry["diff"][0]["after"]
    assert "interface Ethernet1/2" in dry["commands"] and "speed 400000" in dry["commands"]
    assert target.password not in json.dumps(dry)
    applied = run_module(monkeypatch, capsys, "switch_config", **args)
    assert applied["changed"] is True, applied
    again = run_module(monkeypatch, capsys, "switch_config", **args)
    assert again["changed"] is False and again["commands"] == []
    platform = platform_for(platform_name)
    view = platform.parse("leaf2", run_commands(target, platform.name, platform.commands, netmiko_connect))
    assert view.ports["Ethernet1/1"].description == "lab-w1 mlx5_1"
    assert view.ports["Ethernet1/2"].speed_gbps == 400


def test_a_setting_the_switch_did_not_take_fails_naming_the_port(
    served: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A switch that accepts config mode but keeps its running configuration (a command it
    silently ignores): the read-back after the change catches it."""
    monkeypatch.setattr(switch_config, "send_config", lambda *args: None)
    target, platform_name = _target(served, "leaf1")
    result = run_module(
        monkeypatch,
        capsys,
        "switch_config",
        name="leaf1",
        host=target.host,
        port=target.port,
        username=target.username,
        password=target.password,
        network_os=platform_name,
        timeout=10,
        ports=[{"port": "Ethernet1", "description": "lab-w1 mlx5_0", "mtu": 9214}],
    )
    assert result["failed"] is True and result["kind"] == "output"
    assert result["msg"] == "leaf1: the switch did not take the settings of Ethernet1"
    assert result["commands"] == ["interface Ethernet1", "description lab-w1 mlx5_0"]
