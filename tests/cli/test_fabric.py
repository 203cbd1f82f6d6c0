"""`gpurack fabric check`: bad input is one line with exit 64; a switch that cannot be read
skips its NICs with the reason and the run exits 0; the output forms."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible.parsing.vault import VaultLib, VaultSecret
from cli_helpers import invoke

pytest.importorskip("netmiko", reason="netmiko reads the switches")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _inventory(tmp_path: Path, cabling: Any, switches: dict[str, Any] | None = None) -> Path:
    switches = {"leaf1": {"ansible_host": "127.0.0.1", "ansible_port": _closed_port(),
                          "ansible_network_os": "arista_eos", "ansible_user": "admin",
                          "ansible_password": "not-shown"}} if switches is None else switches  # fmt: skip
    children: dict[str, Any] = {"gpu_nodes": {"hosts": {"gpu01": {"gpurack_cabling": cabling}}}}
    if switches:
        children["tor_switches"] = {"hosts": switches}
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump({"all": {"children": children}}))
    return path


CABLING = {"mlx5_0": {"switch": "leaf1", "port": "Et1"}}


def test_an_unreadable_switch_skips_its_nics_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hosts = _inventory(tmp_path, CABLING)
    port = yaml.safe_load(hosts.read_text())["all"]["children"]["tor_switches"]["hosts"]["leaf1"][
        "ansible_port"
    ]
    done = invoke(capsys, "fabric", "check", "-i", hosts, "--json", "--timeout", "5")
    # Every switch unreadable: nothing was assessed, which is not a pass.
    assert done.code == 2, done.err
    assert "could not assess the fabric: no switch could be read (1 unreadable)" in done.err
    check = json.loads(done.out)
    why = f"leaf1 (127.0.0.1:{port}): unreachable: connection refused"
    assert check["switches"] == {"leaf1": {"read": False, "error": why}}
    results = check["servers"]["gpu01"]["results"]
    assert {(r["id"], r["verdict"]) for r in results} == {
        ("switch.cabling", "skip"),
        ("switch.port.state", "skip"),
    }
    assert results[0]["reason"] == f"leaf1 could not be read: {why}"
    assert "not-shown" not in done.out + done.err
    table = invoke(capsys, "fabric", "check", "-i", hosts, "--no-record", "--timeout", "5")
    assert table.code == 2
    assert "leaf1" in table.out and "unreachable: connection refused" in table.out


@pytest.mark.parametrize(
    ("cabling", "switches", "message"),
    [
        (CABLING, {}, "no hosts in tor_switches; nothing to check"),
        (
            {"mlx5_0": {"switch": "leaf1"}},
            None,
            "gpu01: gpurack_cabling.mlx5_0.port must be a non-empty string",
        ),
        ({"mlx5_0": "leaf1"}, None, "gpu01: gpurack_cabling.mlx5_0 must be {switch, port}"),
        (None, None, "no host has gpurack_cabling; nothing to check"),
    ],
)
def test_bad_input_is_one_line_and_exit_64(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cabling: Any, switches: Any, message: str
) -> None:
    done = invoke(capsys, "fabric", "check", "-i", _inventory(tmp_path, cabling, switches))
    assert done.code == 64
    assert message in done.err
    assert "Traceback" not in done.err


def test_a_switch_without_credentials_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hosts = _inventory(tmp_path, CABLING, {"leaf1": {"ansible_network_os": "arista_eos"}})
    done = invoke(capsys, "fabric", "check", "-i", hosts)
    assert done.code == 64
    assert "leaf1: a switch needs ansible_user and ansible_password" in done.err


def test_a_switch_port_that_is_not_a_tcp_port_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    login = {"ansible_network_os": "arista_eos", "ansible_user": "a", "ansible_password": "b"}
    hosts = _inventory(tmp_path, CABLING, {"leaf1": {**login, "ansible_port": "ssh"}})
    done = invoke(capsys, "fabric", "check", "-i", hosts)
    assert done.code == 64
    assert "leaf1: ansible_port must be a TCP port (1 to 65535), got 'ssh'" in done.err


def test_a_timeout_outside_1_to_600_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = invoke(capsys, "fabric", "check", "-i", _inventory(tmp_path, CABLING), "--timeout", "0")
    assert done.code == 64
    assert "--timeout must be 1 to 600 seconds, got 0" in done.err


def test_a_vault_encrypted_password_is_read_with_ansibles_vault_password_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = b"pw-for-vault"
    vault = VaultLib([("default", VaultSecret(secret))])
    encrypted = vault.encrypt("s3cret-in-vault").decode()
    hosts = _inventory(tmp_path, CABLING)
    (tmp_path / "host_vars").mkdir()
    block = "\n".join("  " + line for line in encrypted.splitlines())
    (tmp_path / "host_vars" / "leaf1.yml").write_text(f"ansible_password: !vault |\n{block}\n")
    locked = invoke(capsys, "fabric", "check", "-i", hosts, "--no-record")
    assert locked.code == 64
    assert "ANSIBLE_VAULT_PASSWORD_FILE" in locked.err and "s3cret-in-vault" not in locked.err
    password_file = tmp_path / "vault-pass"
    password_file.write_bytes(secret + b"\n")
    monkeypatch.setattr("ansible.constants.DEFAULT_VAULT_PASSWORD_FILE", str(password_file))
    done = invoke(capsys, "fabric", "check", "-i", hosts, "--no-record", "--json", "--timeout", "2")
    assert done.code == 2, done.err  # decrypted, then unreachable: not assessed
    assert json.loads(done.out)["switches"]["leaf1"]["read"] is False
    assert "s3cret-in-vault" not in done.out + done.err


# Plans that cannot be true, refused before any switch is contacted (issue #32, class 7).
@pytest.mark.parametrize(
    ("cabling", "message"),
    [
        (
            {"mlx5_0": {"switch": "spine9", "port": "Et1"}},
            "gpu01 mlx5_0: switch 'spine9' (spine9 Ethernet1) is not in tor_switches (leaf1)",
        ),
        (
            {"mlx5_0": {"switch": "leaf1", "port": "Et1"}, "mlx5_0 ": {"switch": "leaf1", "port": "Et2"}},
            "gpu01 mlx5_0 is planned on two ports: leaf1 Ethernet1 (mlx5_0) and leaf1 Ethernet2 (mlx5_0)",
        ),
        (
            {
                "mlx5_0": {"switch": "leaf1", "port": "Et1", "lldp_port_id": "ens1"},
                "mlx5_1": {"switch": "leaf1", "port": "Et2", "lldp_port_id": "ens1"},
            },
            "gpu01 ens1 is planned on two ports: leaf1 Ethernet1 (mlx5_0) and leaf1 Ethernet2 (mlx5_1)",
        ),
        (
            {
                "mlx5_0": {"switch": "leaf1", "port": "Et1"},
                "mlx5_1": {"switch": "leaf1", "port": "Ethernet1"},
            },
            "leaf1 Ethernet1 is planned for both gpu01 mlx5_0 and gpu01 mlx5_1",
        ),
    ],
)
def test_a_plan_that_cannot_be_true_is_refused_before_any_switch_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cabling: dict[str, Any], message: str
) -> None:
    done = invoke(capsys, "fabric", "check", "-i", _inventory(tmp_path, cabling), "--no-record")
    assert done.code == 64, done
    assert message in done.err and len(done.err.splitlines()) == 1, done.err


def test_a_port_that_answers_something_other_than_ssh_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)

    def answer_http() -> None:
        while True:
            try:
                peer, _ = server.accept()
            except OSError:
                return
            peer.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            peer.close()

    threading.Thread(target=answer_http, daemon=True).start()
    switches = {"leaf1": {"ansible_host": "127.0.0.1", "ansible_port": server.getsockname()[1],
                          "ansible_network_os": "arista_eos", "ansible_user": "admin",
                          "ansible_password": "pw"}}  # fmt: skip
    try:
        done = invoke(capsys, "fabric", "check", "-i", _inventory(tmp_path, CABLING, switches), "--json",
                      "--no-record", "--timeout", "5")  # fmt: skip
    finally:
        server.close()
    assert done.code == 2, done
    error = json.loads(done.out)["switches"]["leaf1"]["error"]
    assert "session failed: 'Error reading SSH protocol banner" in error, error
    # paramiko logs the failed handshake with a traceback from its own thread unless quietened.
    assert "Traceback" not in done.err and "SSHException" not in done.err, done.err
