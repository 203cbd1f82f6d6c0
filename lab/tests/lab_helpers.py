"""Helpers shared by the lab's end-to-end tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any

import pytest
from gpurack import cli
from gpurack.lab import docker, rack
from gpurack.lab.state import load


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
