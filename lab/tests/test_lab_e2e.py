"""End to end: bring the lab up, preflight (and prepare) over SSH, tear it down, nothing left."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from gpurack import cli
from gpurack_lab import disks, docker, rack
from gpurack_lab.state import NETWORK, lab_dir
from lab_helpers import docker_unusable, json_run, ssh

pytestmark = pytest.mark.lab


def test_lab_up_preflight_prepare_down_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reason = docker_unusable()
    if reason:
        pytest.skip(f"Docker cannot run on this machine: {reason}")
    if docker.lab_containers():
        pytest.fail("a lab is already running on this machine; run 'gpurack lab down' first")
    inventory = str(rack.hosts_file().parent)
    reports = tmp_path / "reports"
    try:
        up = ["lab", "up", "--workers", "2", "--profile", "hgx-h100x8-ib", "--fault", "ib-port-down@lab-w2"]
        assert cli.main(up) == 0
        assert cli.main(up) == 0, "a second lab up must report the running lab"
        assert "lab already up" in capsys.readouterr().out

        assert ssh("lab-w1", "hostname").stdout.strip() == "lab-w1"
        smi = ssh("lab-w1", "nvidia-smi -q")
        assert smi.returncode == 0
        assert "Attached GPUs                             : 8" in smi.stdout
        assert ssh("lab-w2", "nvidia-smi dmon").returncode == 2
        assert ssh("lab-w2", "test -b /dev/nvme0n1 && test -b /dev/nvme1n1").returncode == 0

        _assert_preflight_fails_only_the_faulty_worker(inventory, reports, capsys)
        _assert_prepare_converges_the_healthy_worker(inventory, capsys)
    finally:
        assert cli.main(["lab", "down"]) == 0

    _assert_nothing_left()


def _assert_preflight_fails_only_the_faulty_worker(
    inventory: str, reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Preflight fails lab-w2 (its IB port is down) on that one check, and passes lab-w1."""
    code, result = json_run(
        ["run", "preflight", "-i", inventory, "-e", f"preflight_report_dir={reports}"], capsys
    )
    assert code == 1, result
    healthy = json.loads((reports / "lab-w1.json").read_text())
    faulty = json.loads((reports / "lab-w2.json").read_text())
    # The real HGX capture warns (clock slowdown reasons, non-GPU links below their maximum);
    # warnings do not fail preflight in the lab's pools (preflight_fail_on_warn: false).
    assert healthy["summary"]["verdict"] in {"pass", "warn"}
    assert healthy["summary"]["fail"] == 0
    assert [h["host"] for h in result["hosts"] if h["failed"]] == ["lab-w2"]
    assert faulty["summary"]["verdict"] == "fail"
    failed = [r for r in faulty["results"] if r["verdict"] == "fail"]
    assert [r["id"] for r in failed] == ["rdma.ports.state"]
    port = failed[0]
    assert "mlx5_0" in f"{port['measured']} {port['reason']}"
    assert port["expected"] is not None
    assert port["remediation"]


def _assert_prepare_converges_the_healthy_worker(inventory: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Prepare the worker that passed preflight, twice: the second run changes nothing."""
    healthy_only = ["-l", "lab-w1"]
    code, first = json_run(["run", "prepare", "-i", inventory, *healthy_only], capsys)
    assert code == 0, first
    assert first["hosts"][0]["changed"] > 0, first
    code, second = json_run(["run", "prepare", "-i", inventory, *healthy_only], capsys)
    assert code == 0, second
    assert all(h["changed"] == 0 for h in second["hosts"]), second
    # The converged state, read over SSH: scratch XFS mounted, containerd running,
    # sysctls persisted, and nvidia-peermem loaded at boot (the profile has GPUs and RDMA).
    assert "xfs" in ssh("lab-w1", "findmnt -n -o FSTYPE /raid").stdout
    assert ssh("lab-w1", "systemctl is-active containerd").stdout.strip() == "active"
    assert "net.ipv4.ip_forward" in ssh("lab-w1", "cat /etc/sysctl.d/90-gpurack.conf").stdout
    assert "nvidia-peermem" in ssh("lab-w1", "cat /etc/modules-load.d/nvidia-peermem.conf").stdout


def _assert_nothing_left() -> None:
    """After lab down: no lab container, network, loop disk, state directory or inventory."""
    names = subprocess.run(
        ["docker", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True, check=False
    ).stdout
    assert not [n for n in names.split() if n.startswith("lab-")]
    assert not docker.network_exists(NETWORK)
    assert disks.attached_under(lab_dir()) == {}
    assert not lab_dir().exists()
    assert not rack.hosts_file().exists()
