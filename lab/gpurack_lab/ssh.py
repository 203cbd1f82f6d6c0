"""The lab hosts' SSH: the lab's key pair, each host's authorized key, the ssh command line,
and waiting for sshd to answer."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from gpurack_lab import docker, faults, profiles, shims
from gpurack_lab.errors import LabError
from gpurack_lab.state import LabHost

SSH_WAIT_S = 120.0
KEY_NAME = "id_ed25519"


def keypair(root: Path) -> Path:
    key = root / KEY_NAME
    if not key.exists():
        done = subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpurack-lab", "-f", str(key)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise LabError(f"ssh-keygen failed: {done.stderr.strip()}")
    return key


def provision(
    host: LabHost, profile: profiles.Profile, own: tuple[faults.Fault, ...], key: Path, root: Path
) -> Path:
    """Authorize the key, copy the (faulted) profile and the shims into the container.

    Returns the assembled profile's folder on this machine.
    """
    name = host.name
    docker.exec_in(name, ["mkdir", "-p", "-m", "700", "/root/.ssh"])
    docker.exec_in(
        name, ["mkdir", "-p", profiles.CONTAINER_PROFILE_DIR, str(Path(shims.CONTAINER_REPLAY).parent)]
    )
    docker.copy_into(name, key.with_suffix(".pub"), "/root/.ssh/authorized_keys")
    docker.exec_in(name, ["chmod", "600", "/root/.ssh/authorized_keys"])
    os_release = docker.exec_in(name, ["cat", "/etc/os-release"]).stdout
    uname = docker.exec_in(name, ["uname", "-a"]).stdout
    local = profiles.assemble(profile, root / "hosts" / name / "profile", os_release, uname)
    for fault in own:
        faults.apply(fault, local)
    manifest = shims.build_manifest(local, profiles.CONTAINER_PROFILE_DIR)
    manifest_file = local.parent / "manifest.json"
    manifest_file.write_text(json.dumps(manifest, indent=2) + "\n")
    docker.copy_into(name, local, profiles.CONTAINER_PROFILE_DIR)
    docker.copy_into(name, manifest_file, shims.CONTAINER_MANIFEST)
    docker.copy_into(name, shims.REPLAY_SCRIPT, shims.CONTAINER_REPLAY)
    docker.exec_in(name, ["chmod", "755", shims.CONTAINER_REPLAY])
    for tool in shims.installed_tools(manifest):
        docker.exec_in(name, ["ln", "-sf", shims.CONTAINER_REPLAY, f"{shims.CONTAINER_BIN}/{tool}"])
    return local


def ssh_argv(host: LabHost, key: str, command: Sequence[str] = (), *, batch: bool = False) -> list[str]:
    """The ssh command line that reaches a lab host as root with the lab key."""
    argv = ["ssh", "-i", key, "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
            "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=5"]  # fmt: skip
    if batch:
        argv += ["-o", "BatchMode=yes"]
    return [*argv, f"root@{host.ip}", *command]


def wait_ssh(host: LabHost, key: Path) -> None:
    deadline = time.monotonic() + SSH_WAIT_S
    last = ""
    while time.monotonic() < deadline:
        done = subprocess.run(
            ssh_argv(host, str(key), ["true"], batch=True),
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
        if done.returncode == 0:
            return
        last = done.stderr.strip()
        time.sleep(1)
    raise LabError(f"{host.name} ({host.ip}) did not accept SSH within {SSH_WAIT_S:.0f} s: {last}")
