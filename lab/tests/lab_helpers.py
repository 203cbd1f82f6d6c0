"""Helpers shared by the lab's end-to-end tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from gpurack import cli
from gpurack_lab import docker, rack
from gpurack_lab.state import load


def docker_unusable() -> str | None:
    """Why Docker cannot run here at all, or None when `lab up` can use or start it."""
    if docker.engine_ready():
        return None
    if os.geteuid() != 0:
        return "no Docker daemon answers and starting one needs root"
    if shutil.which("dockerd") is None and shutil.which("apt-get") is None:
        return "no dockerd and no apt-get to install docker.io"
    return None


def json_run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    """`gpurack ARGV --json`: its exit code and the JSON it printed."""
    code = cli.main([*argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out[out.index("{") :])


def ssh(host: str, command: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    """Run a shell command on a lab host as root with the lab key."""
    state = load(rack.state_file())
    assert state is not None
    target = state.host(host)
    assert target is not None
    argv = rack.ssh_argv(target, state.key, [command], batch=True)
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=timeout_s)


# The session cluster's workers, in order; the last repeats when it grows.
CLUSTER_PROFILES = ("h200x1", "hgx-h100x8-ib")
CLUSTER_WORKERS = 2


@dataclass
class LabCluster:
    """The session's lab with Kubernetes: its state folder and how many workers it runs."""

    state_dir: Path
    workers: int = 0

    def up_argv(self, workers: int) -> list[str]:
        profiles = [arg for name in CLUSTER_PROFILES for arg in ("--profile", name)]
        return ["lab", "up", "--workers", str(workers), *profiles, "--kubernetes"]

    def grow(self, workers: int) -> int:
        """`lab up` with at least this many workers (never fewer than it runs); its exit code."""
        wanted = max(workers, self.workers)
        if wanted == self.workers:
            return 0
        code = cli.main(self.up_argv(wanted))
        if code == 0:
            self.workers = wanted
        return code
