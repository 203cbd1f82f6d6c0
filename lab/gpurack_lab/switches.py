"""Start and stop the lab's switches: one detached switch server (gpurack_lab.switch_server)
serving every switch of the plan on loopback, its pid and spec in the lab folder."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpurack_lab import fabric_plan
from gpurack_lab.state import LabHost, lab_dir

START_WAIT_S = 20.0
STOP_WAIT_S = 10.0


class SwitchServerError(RuntimeError):
    """The switch server did not start, or did not answer on every port in time."""


def folder() -> Path:
    return lab_dir() / "switches"


def spec_file() -> Path:
    return folder() / "spec.json"


def _pid_file() -> Path:
    return folder() / "server.pid"


def read_spec() -> dict[str, Any] | None:
    """The spec the running switches serve, None when there are none."""
    try:
        data: dict[str, Any] = json.loads(spec_file().read_text())
    except (OSError, ValueError):
        return None
    return data


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def start(
    workers: Sequence[LabHost], count: int, faults: Sequence[fabric_plan.SwitchFault]
) -> dict[str, Any]:
    """(Re)start the switch server for `count` switches cabled to `workers`; the spec served.

    A switch keeps a configuration saved on it (copy running-config startup-config) across a
    restart as long as the plan and the faults are unchanged.

    Raises:
        UsageError: a bad count or fault.
        SwitchServerError: the server did not come up.
    """
    old = read_spec()
    password = str(old["password"]) if old else secrets.token_urlsafe(12)
    ports = [int(s["port"]) for s in old["switches"]] if old and len(old["switches"]) == count else []
    spec = fabric_plan.build_spec(workers, count, faults, ports or _free_ports(count), password)
    stop()
    folder().mkdir(parents=True, exist_ok=True)
    spec_file().write_text(json.dumps(spec, indent=1) + "\n")
    spec_file().chmod(0o600)  # it holds the switches' password
    log = (folder() / "server.log").open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "gpurack_lab.switch_server", str(spec_file())],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    log.close()
    _pid_file().write_text(f"{process.pid}\n")
    deadline = time.monotonic() + START_WAIT_S
    waiting = [int(s["port"]) for s in spec["switches"]]
    while waiting and time.monotonic() < deadline:
        if process.poll() is not None:
            break
        waiting = [p for p in waiting if not _answers(p)]
        time.sleep(0.2)
    if waiting:
        stop()
        tail = (folder() / "server.log").read_text(errors="replace")[-2000:]
        raise SwitchServerError(f"the lab switches did not answer on ports {waiting}: {tail}")
    return spec


def running_pid() -> int | None:
    """The switch server's pid while it runs."""
    try:
        pid = int(_pid_file().read_text())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def stop() -> bool:
    """Stop the switch server; True when one was running."""
    pid = running_pid()
    if pid is None:
        return False
    os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_WAIT_S
    while time.monotonic() < deadline:
        try:
            reaped, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            reaped = 0
        if reaped or running_pid() is None:
            break
        time.sleep(0.1)
    else:
        os.killpg(pid, signal.SIGKILL)
    _pid_file().unlink(missing_ok=True)
    return True
