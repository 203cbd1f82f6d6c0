"""Helpers shared by the lab's end-to-end tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from gpurack import cli
from gpurack.errors import ExitCode
from gpurack.harvest import job_events
from gpurack.runner import RunRequest, run_playbook
from gpurack_lab import disks, docker, rack
from gpurack_lab.paths import playbook
from gpurack_lab.ssh import ssh_argv
from gpurack_lab.state import NETWORK, lab_dir, load
from kubernetes.client.exceptions import ApiException

# A container security context that Pod Security "restricted" admits (the lab tests' pods).
RESTRICTED = {
    "runAsNonRoot": True,
    "runAsUser": 65534,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def docker_unusable() -> str | None:
    """Why Docker cannot run here at all, or None when `lab up` can use or start it."""
    if docker.engine_ready():
        return None
    if os.geteuid() != 0:
        return "no Docker daemon answers and starting one needs root"
    if shutil.which("dockerd") is None and shutil.which("apt-get") is None:
        return "no dockerd and no apt-get to install docker.io"
    return None


# Every whole-rack `gpurack run site` of the session: its seconds and how many hosts it changed
# (conftest.py prints the first run beside the converged re-runs at the end).
SITE_RUNS: list[dict[str, Any]] = []


def json_run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    """`gpurack ARGV --json`: its exit code and the JSON it printed."""
    started = time.monotonic()
    code = cli.main([*argv, "--json"])
    seconds = time.monotonic() - started
    out = capsys.readouterr().out
    result: dict[str, Any] = json.loads(out[out.index("{") :])
    if argv[:2] == ["run", "site"] and not {"-l", "--limit"} & set(argv) and code == 0:
        changed = sum(1 for host in result.get("hosts", []) if host.get("changed"))
        SITE_RUNS.append({"seconds": round(seconds, 1), "changed_hosts": changed})
    return code, result


def ssh(host: str, command: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    """Run a shell command on a lab host as root with the lab key."""
    state = load(rack.state_file())
    assert state is not None
    target = state.host(host)
    assert target is not None
    argv = ssh_argv(target, state.key, [command], batch=True)
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=timeout_s)


# The session cluster's workers, in order; the last repeats when it grows.
CLUSTER_PROFILES = ("h200x1", "hgx-h100x8-ib")
CLUSTER_WORKERS = 2


@dataclass
class LabCluster:
    """The session's lab with Kubernetes: its state folder, how many workers it runs, and the
    faults (`ib-port-down@lab-w4`) its workers were started with."""

    state_dir: Path
    workers: int = 0
    faults: list[str] = field(default_factory=list)

    def up_argv(self, workers: int) -> list[str]:
        profiles = [arg for name in CLUSTER_PROFILES for arg in ("--profile", name)]
        faults = [arg for spec in self.faults for arg in ("--fault", spec)]
        return ["lab", "up", "--workers", str(workers), *profiles, *faults, "--kubernetes"]

    def grow(self, workers: int, faults: tuple[str, ...] = ()) -> int:
        """`lab up` with at least this many workers (never fewer than it runs), the new ones
        with `faults`; its exit code. A running worker keeps its profile and faults."""
        wanted = max(workers, self.workers)
        if wanted == self.workers:
            return 0
        before = list(self.faults)
        self.faults.extend(faults)
        code = cli.main(self.up_argv(wanted))
        if code == 0:
            self.workers = wanted
        else:
            self.faults = before
        return code


def lab_leftovers() -> list[str]:
    """What a `lab down` left behind: containers, network, loop disks, state, inventory. Another
    lab's containers (a light lab beside this one, in its own state dir) are not this lab's."""
    names = subprocess.run(
        ["docker", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True, check=False
    ).stdout
    theirs = {
        c.name for c in docker.lab_containers() if c.owner not in (None, str(lab_dir())) and not c.abandoned()
    }
    left = [f"container {n}" for n in names.split() if n.startswith("lab-") and n not in theirs]
    if docker.network_exists(NETWORK):
        left.append(f"network {NETWORK}")
    left += [f"loop disk {loop}" for loop in disks.attached_under(lab_dir())]
    if lab_dir().exists():
        left.append(f"state folder {lab_dir()}")
    if rack.hosts_file().exists():
        left.append(f"inventory {rack.hosts_file()}")
    left += [f"switch server pid {pid}" for pid in _switch_servers()]
    return left


def _switch_servers() -> list[int]:
    """Processes serving this lab's switches (their spec lies in the lab folder)."""
    marker = str(lab_dir() / "switches").encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if b"gpurack_lab.switch_server" in cmdline and marker in cmdline:
            found.append(int(proc.name))
    return found


def _joined(nodes: tuple[str, ...] = ("lab-cp1", "lab-w1", "lab-w2")) -> bool:
    """Whether the lab's cluster answers with these nodes Ready (an earlier test ran site)."""
    from gpurack_lab import lab_kubernetes
    from kubernetes import client, config

    if not lab_kubernetes.kubeconfig().is_file():
        return False
    try:
        config.load_kube_config(config_file=str(lab_kubernetes.kubeconfig()))
        items = client.CoreV1Api().list_node(_request_timeout=10).items
    except Exception:  # any failure means: not joined yet
        return False
    ready = {
        n.metadata.name
        for n in items
        if any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or [])
    }
    return set(nodes) <= ready


def ensure_site(capsys: pytest.CaptureFixture[str]) -> None:
    """`gpurack run site` on the session cluster unless an earlier test already joined it:
    a test of the platform layer can run alone or after the Kubernetes end-to-end test."""
    if _joined():
        return
    code, result = json_run(["run", "site", "-i", str(rack.hosts_file().parent)], capsys)
    assert code == 0, result


def ensure_dra_driver() -> None:
    """The example DRA driver on the H100 pool (lab/playbooks/lab_dra.yml, as `make run` runs it):
    a DRA pool's DeviceClass exists from site on, its devices only once the driver publishes them.
    The playbook is idempotent, so each test that needs the driver runs it."""
    result = run_playbook(
        RunRequest(playbook=playbook("lab_dra"), inventory=rack.hosts_file().parent), lab_dir() / "runs"
    )
    assert result.exit_code == ExitCode.OK, result


def wait(what: str, probe: Callable[[], Any], timeout_s: float = 180.0, every_s: float = 3.0) -> Any:
    """Poll until probe() returns something truthy; fail with the last value after the timeout."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(every_s)
    pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}; last: {last!r}")


def gone_or_going(read: Callable[[], dict[str, Any]]) -> bool:
    """Whether the object `read` returns the metadata of is deleted, or being deleted."""
    try:
        meta = read()
    except ApiException as exc:
        return bool(exc.status == 404)
    return bool(meta.get("deletionTimestamp") or meta.get("deletion_timestamp"))


def hosts_in_events(artifact_dir: Path) -> tuple[set[str], set[str]]:
    """The hosts a run's job events ran tasks for, and the addresses its tasks were delegated to."""
    hosts: set[str] = set()
    delegated: set[str] = set()
    for event in job_events(artifact_dir):
        data = event.get("event_data") or {}
        if data.get("host"):
            hosts.add(str(data["host"]))
        res = data.get("res")
        to = res.get("_ansible_delegated_vars") if isinstance(res, dict) else None
        if isinstance(to, dict) and to.get("ansible_host"):
            delegated.add(str(to["ansible_host"]))
    return hosts, delegated


def validation_reused(artifact_dir: Path) -> dict[str, bool]:
    """Per host, whether a run's validate play reused preflight's reading (roles/validation)."""
    reused: dict[str, bool] = {}
    for event in job_events(artifact_dir):
        data = event.get("event_data") or {}
        if (
            event.get("event") == "runner_on_ok"
            and data.get("task") == "Decide whether the node must be read again"
        ):
            reused[str(data["host"])] = bool(data["res"]["ansible_facts"]["__validation_reuse"])
    return reused
