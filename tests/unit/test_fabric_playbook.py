"""playbooks/fabric.yml on this machine (-c local): a tag selection runs the switch phase whole.

gpu01's plan puts mlx5_1 on leaf1 Ethernet2; its own LLDP (a stand-in `lldpcli` printing
tests/fixtures/switch/host/lldpcli_json0.json) shows it on leaf2. With `-t switch_fabric` as
without tags, the server is checked and fails naming the NIC, and leaf1, which does not answer,
reports its line: the included entry points apply the tags, or a selection would run the includes
and none of their tasks. `--skip-tags switch_fabric` runs none of the phase.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest
from role_cases import REPO, HostRun, run_cases
from switch_outputs import OUTPUTS

PLAYBOOK = REPO / "playbooks" / "fabric.yml"
CHECK = "Check the server's switch ports and keep where it was seen"
VERDICT = "Fail the server on a failed switch-side check"
NAMED = "gpu01 mlx5_1 should be on leaf1 Ethernet2; the host's LLDP (ens1f1np1) shows leaf2 Ethernet1/3"
CABLING = {
    "mlx5_0": {"switch": "leaf1", "port": "Et1", "lldp_port_id": "ens1f0np0"},
    "mlx5_1": {"switch": "leaf1", "port": "Ethernet2", "lldp_port_id": "ens1f1np1"},
}
# A play whose hosts all fail stops the playbook, so the server's verdict is seen with no switch
# read (the switch plays match no host) and the unreadable switch's report in a run of its own.
NO_SWITCH_READ = ("-e", "gpurack_switch_hosts=tor_switches:&gpu_nodes")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> tuple[dict[str, HostRun], str]:
    """fabric.yml over gpu01 and an unreachable leaf1, with the server's own LLDP from the fixture."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    lldpcli = bin_dir / "lldpcli"
    lldpcli.write_text(f"#!/bin/sh\ncat {OUTPUTS / 'host' / 'lldpcli_json0.json'}\n")
    lldpcli.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir), prepend=os.pathsep)  # the local connection inherits it
    leaf1 = {"ansible_host": "127.0.0.1", "ansible_port": _closed_port(), "ansible_network_os": "arista_eos",
             "ansible_user": "admin", "ansible_password": "unused"}  # fmt: skip
    groups = {"gpu_nodes": ["gpu01"], "tor_switches": ["leaf1"]}
    cases: dict[str, dict[str, Any]] = {"gpu01": {"gpurack_cabling": CABLING}, "leaf1": leaf1}
    return run_cases(tmp_path, PLAYBOOK, cases, ("-e", "switch_fabric_timeout=5", *extra), groups)


@pytest.mark.parametrize("tags", [(), ("-t", "switch_fabric")])
def test_a_tag_selection_still_checks_the_server_and_fails_it_naming_the_nic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tags: tuple[str, ...]
) -> None:
    runs, out = _run(tmp_path, monkeypatch, *NO_SWITCH_READ, *tags)
    assert runs["gpu01"].ran(CHECK), out
    assert (runs["gpu01"].failed_task or "").endswith(VERDICT), out
    assert NAMED in runs["gpu01"].message


def test_a_tag_selection_still_reports_a_switch_that_could_not_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs, out = _run(tmp_path, monkeypatch, "-t", "switch_fabric")
    assert runs["gpu01"].ran(CHECK), out
    assert (runs["leaf1"].failed_task or "").endswith("Report a switch that could not be read"), out
    assert "unreachable: connection refused" in runs["leaf1"].message


def test_skipping_the_tag_runs_none_of_the_switch_phase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs, out = _run(tmp_path, monkeypatch, "--skip-tags", "switch_fabric")
    assert not runs["gpu01"].ran(CHECK) and runs["gpu01"].failed_task is None, out
    assert not runs["leaf1"].ran("Read the switch over SSH") and runs["leaf1"].failed_task is None, out
