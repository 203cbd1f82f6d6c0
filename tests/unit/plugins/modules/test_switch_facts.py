"""switch_facts over real SSH: fakenos serves tests/fixtures/switch's outputs as leaf1 (EOS) and
leaf2 (NX-OS) on loopback; netmiko reads them as it would a rack's switches."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from module_helpers import run_module
from switch_outputs import outputs, view

fakenos = pytest.importorskip("fakenos", reason="fakenos (the dev extra) fakes switches over SSH")

# fakenos's server thread raises after a refused login (its channel is None); the client side,
# which these tests are about, has already failed cleanly by then.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
USER, PASSWORD = "gpurack", "s3cret-not-logged"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _host(platform: str, port: int) -> dict[str, Any]:
    prompts = ["{base_prompt}>", "{base_prompt}#"]
    commands = {command: {"output": text, "prompt": prompts} for command, text in outputs(platform).items()}
    return {
        "port": port,
        "platform": platform,
        "nos": {"plugin": platform, "configuration": {"commands": commands}},
    }


@pytest.fixture(scope="module")
def switches() -> Iterator[dict[str, int]]:
    """leaf1 and leaf2 answering SSH on loopback, by name: their ports."""
    ports = {"leaf1": _free_port(), "leaf2": _free_port()}
    inventory = {
        "default": {
            "username": USER,
            "password": PASSWORD,
            "server": {
                "plugin": "ParamikoSshServer",
                "configuration": {"address": "127.0.0.1", "timeout": 1},
            },
        },
        "hosts": {"leaf1": _host("arista_eos", ports["leaf1"]), "leaf2": _host("cisco_nxos", ports["leaf2"])},
    }
    net = fakenos.FakeNOS(inventory=inventory)
    net.start()
    try:
        yield ports
    finally:
        net.stop()


def _read(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str, port: int, **args: Any
) -> dict[str, Any]:
    network_os = {"leaf1": "arista.eos.eos", "leaf2": "cisco_nxos"}.get(name, "arista_eos")
    params = {"name": name, "host": "127.0.0.1", "port": port, "username": USER, "password": PASSWORD}
    return run_module(
        monkeypatch, capsys, "switch_facts", **{**params, "network_os": network_os, "timeout": 10, **args}
    )


@pytest.mark.parametrize(("name", "platform"), [("leaf1", "arista_eos"), ("leaf2", "cisco_nxos")])
def test_a_switch_read_over_ssh_gives_the_view_of_its_outputs(
    switches: dict[str, int],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    platform: str,
) -> None:
    result = _read(monkeypatch, capsys, name, switches[name])
    assert not result.get("failed"), result
    assert result["changed"] is False
    assert result["switch"] == view(platform, name).to_dict()


def test_refused_credentials_say_so_and_never_show_the_password(
    switches: dict[str, int], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _read(monkeypatch, capsys, "leaf1", switches["leaf1"], password="wrong")
    assert result["failed"] is True and result["kind"] == "credentials"
    assert result["msg"] == f"leaf1 (127.0.0.1:{switches['leaf1']}): credentials refused for user {USER}"
    assert PASSWORD not in str(result) and "wrong" not in result["msg"]


def test_a_closed_port_is_unreachable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    port = _free_port()
    result = _read(monkeypatch, capsys, "leaf9", port)
    assert result["kind"] == "unreachable"
    assert result["msg"] == f"leaf9 (127.0.0.1:{port}): unreachable: connection refused"


def test_a_switch_that_never_speaks_ssh_times_out_within_the_timeout(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    held: list[socket.socket] = []
    accepting = threading.Thread(target=lambda: held.append(silent.accept()[0]), daemon=True)
    accepting.start()
    try:
        result = _read(monkeypatch, capsys, "leaf8", silent.getsockname()[1], timeout=2)
    finally:
        for conn in held:
            conn.close()
        silent.close()
    assert result["kind"] == "timeout", result
    assert result["msg"].startswith("leaf8 (127.0.0.1:") and "session failed" in result["msg"]


def test_an_unknown_platform_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _read(monkeypatch, capsys, "leaf7", 22, network_os="junos")
    assert result["kind"] == "platform"
    assert result["msg"] == "leaf7: unknown switch platform 'junos'; gpurack reads arista_eos, cisco_nxos"


def test_a_timeout_outside_1_to_600_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _read(monkeypatch, capsys, "leaf1", 22, timeout=0)
    assert result["msg"] == "leaf1: timeout must be 1 to 600 seconds, got 0"
