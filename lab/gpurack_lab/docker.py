"""The Docker engine, through the `docker` CLI with argv lists: the only lab module that runs it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpurack.errors import ExitCode, GpurackError

# Every lab object carries this label; removal only ever touches objects that have it.
LABEL = "io.gpurack.lab"
# A lab container names the state folder whose lab.json holds it: a container whose folder is
# gone (a machine copied, its /tmp wiped) belongs to no lab that `lab down` could remove.
OWNER_LABEL = "io.gpurack.lab.owner"
DOCKERD_LOG = Path("/var/log/gpurack-dockerd.log")  # the same log tools/molecule.sh uses
IMAGE_REPO = "gpurack-node"
CONTAINERD_STORE = "/var/lib/containerd"

# systemd as PID 1 on these machines (shared/notes/lab-host-facts.md): --privileged fails
# because the bounding set lacks CAP_SYS_RESOURCE, so take every other capability instead.
SYSTEMD_FLAGS: tuple[str, ...] = (
    "--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE",
    "--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
    "--security-opt", "systempaths=unconfined", "--device-cgroup-rule", "a *:* rwm",
    "--cgroupns=private", "--tmpfs", "/run", "--tmpfs", "/run/lock", "--tmpfs", "/tmp",
    "--stop-signal", "SIGRTMIN+3",
)  # fmt: skip


class DockerError(GpurackError):
    """A docker command failed; the message names the command and Docker's own error."""

    code = ExitCode.FAILED


@dataclass(frozen=True, slots=True)
class Container:
    """A lab container as Docker sees it."""

    name: str
    state: str  # running | exited | created ...
    ip: str | None
    owner: str | None = None  # the lab state folder that started it, None before owners were labelled
    network: str | None = None  # the Docker network it is on (lab-net, or a light lab's)

    def orphaned(self) -> bool:
        """True when no lab can own it any more: it stopped, or its owner's folder is gone."""
        return self.state != "running" or self.abandoned()

    def abandoned(self) -> bool:
        """True when its owner's folder is gone (one without an owner label may be someone's)."""
        return self.owner is not None and not Path(self.owner).is_dir()


def _run(
    args: Sequence[str], *, check: bool = True, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError as exc:
        raise DockerError("docker is not installed (apt-get install docker.io)") from exc
    except subprocess.TimeoutExpired as exc:
        raise DockerError(f"docker {' '.join(args[:2])} did not finish within {timeout:.0f} s") from exc
    if check and done.returncode != 0:
        stderr = done.stderr.strip().splitlines()
        raise DockerError(
            f"docker {' '.join(args[:2])} failed: {stderr[-1] if stderr else f'rc {done.returncode}'}"
        )
    return done


def engine_ready() -> bool:
    """True when a Docker daemon answers."""
    try:
        return _run(["info", "--format", "{{.ServerVersion}}"], check=False, timeout=30).returncode == 0
    except DockerError:
        return False


def ensure_engine(wait_s: float = 60) -> str:
    """Make sure a Docker daemon runs: install docker.io and start dockerd when needed; say what was done.

    Raises:
        DockerError: not root, the install failed, or dockerd did not answer in time.
    """
    if engine_ready():
        return "running"
    if os.geteuid() != 0:
        raise DockerError("Docker is not running and starting it needs root")
    action = "started"
    if shutil.which("dockerd") is None or shutil.which("docker") is None:
        _apt_install("docker.io")
        action = "installed and started"
    with DOCKERD_LOG.open("ab") as log:
        # setsid: dockerd outlives this command, like `setsid dockerd &` in tools/molecule.sh.
        subprocess.Popen(
            ["dockerd"], stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True
        )
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if engine_ready():
            return action
        time.sleep(1)
    raise DockerError(f"dockerd did not answer within {wait_s:.0f} s (see {DOCKERD_LOG})")


def _apt_install(*packages: str) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for argv in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", *packages]):
        done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or [f"rc {done.returncode}"])[-1]
            raise DockerError(f"{' '.join(argv[:2])} {' '.join(packages)} failed: {tail}")


def image_tag(build_script: Path) -> str:
    """The content-hash tag build-node-image.sh gives the image it builds from this script."""
    digest = hashlib.sha256(build_script.read_bytes()).hexdigest()[:12]
    return f"{os.environ.get('GPURACK_NODE_IMAGE_REPO', IMAGE_REPO)}:{digest}"


def image_exists(tag: str) -> bool:
    """True when the image is in the local store."""
    return _run(["image", "inspect", tag], check=False).returncode == 0


def ensure_image(build_script: Path) -> tuple[str, bool]:
    """Build the node image unless its content-hash tag exists; return (tag, was cached).

    Raises:
        DockerError: the build failed (its last output line is in the message).
    """
    tag = image_tag(build_script)
    if image_exists(tag):
        return tag, True
    if shutil.which("debootstrap") is None:
        _apt_install("debootstrap")
    done = subprocess.run([str(build_script)], capture_output=True, text=True, check=False)
    if done.returncode != 0 or not image_exists(tag):
        tail = ((done.stderr or done.stdout).strip().splitlines() or [f"rc {done.returncode}"])[-1]
        raise DockerError(f"building the node image failed: {tail}")
    return tag, False


def purge_image(tag: str) -> list[str]:
    """Remove the node image's content-hash tag, and its suite tag when no container uses it.

    The suite tag (gpurack-node:bookworm) is shared with Molecule: it stays while any
    container runs from the image. Returns the tags removed.
    """
    image_id = _run(["image", "inspect", "--format", "{{.Id}}", tag], check=False).stdout.strip()
    if not image_id:
        return []
    removed = [tag]
    _run(["image", "rm", tag], check=False)
    suite = f"{tag.split(':', 1)[0]}:bookworm"
    same = _run(["image", "inspect", "--format", "{{.Id}}", suite], check=False).stdout.strip() == image_id
    users = _run(["ps", "--all", "--quiet", "--filter", f"ancestor={image_id}"], check=False).stdout.split()
    if same and not users and _run(["image", "rm", suite], check=False).returncode == 0:
        removed.append(suite)
    return removed


def network_exists(name: str) -> bool:
    """True when a network of that name exists."""
    return _run(["network", "inspect", name], check=False).returncode == 0


def create_network(name: str, subnet: str, gateway: str) -> None:
    """A user-defined bridge with a fixed subnet, labelled as the lab's.

    Raises:
        DockerError: e.g. the subnet overlaps another network.
    """
    _run(["network", "create", "--driver", "bridge", "--subnet", subnet, "--gateway", gateway,
          "--label", LABEL, name])  # fmt: skip


def remove_network(name: str) -> None:
    """Remove the lab network if it exists and carries the lab label."""
    done = _run(["network", "inspect", "--format", "{{json .Labels}}", name], check=False)
    if done.returncode == 0 and LABEL in (json.loads(done.stdout) or {}):
        _run(["network", "rm", name])


def _lab_host_args(name: str, network: str, ip: str, memory: str, owner: Path) -> list[str]:
    """`docker run` arguments every lab host has: its name as hostname, the lab and owner labels,
    its fixed address and a memory limit without swap."""
    return ["run", "--detach", "--name", name, "--hostname", name, "--label", LABEL,
            "--label", f"{OWNER_LABEL}={owner}", "--network", network, "--ip", ip,
            "--memory", memory, "--memory-swap", memory]  # fmt: skip


def run_container(
    name: str,
    image: str,
    *,
    network: str,
    ip: str,
    memory: str,
    owner: Path,
    devices: Sequence[tuple[str, str]] = (),
) -> None:
    """Start a systemd container with its own hostname, fixed IP and memory limit.

    Raises:
        DockerError: docker run failed.
    """
    # A reboot inside stops systemd, so the container exits; the restart policy brings it
    # back as a machine comes back (same IP, disks and files; /run and /tmp fresh).
    # containerd's own store on a volume (Docker's ext4, not its overlayfs): overlay on overlay
    # fails (EINVAL), overlay on a volume works, so the node runs containerd's default overlayfs
    # snapshotter as a real host does; `rm --volumes` removes it with the node.
    args = [*_lab_host_args(name, network, ip, memory, owner),
            "--volume", CONTAINERD_STORE, "--restart", "unless-stopped", *SYSTEMD_FLAGS]  # fmt: skip
    for host_path, container_path in devices:
        args += ["--device", f"{host_path}:{container_path}"]
    _run([*args, image])


# A light host's PID 1: host keys made per container, as the node image's sshd unit does.
LIGHT_COMMAND = "ssh-keygen -A >/dev/null && mkdir -p /run/sshd && exec /usr/sbin/sshd -D -e"


def run_light_container(name: str, image: str, *, network: str, ip: str, memory: str, owner: Path) -> None:
    """Start a light host: the node image with sshd as PID 1 (no systemd, no restart policy, a
    little memory), for facts, capture, preflight and validate at fleet size.

    Raises:
        DockerError: docker run failed.
    """
    _run([*_lab_host_args(name, network, ip, memory, owner), "--tmpfs", "/run", "--tmpfs", "/tmp",
          "--entrypoint", "/bin/sh", image, "-c", LIGHT_COMMAND])  # fmt: skip


def lab_containers() -> list[Container]:
    """Every container carrying the lab label, running or not."""
    names = _run(["ps", "--all", "--filter", f"label={LABEL}", "--format", "{{.Names}}"]).stdout.split()
    if not names:
        return []
    fmt = (
        "{{.Name}}|{{.State.Status}}|{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}"
        f'|{{{{index .Config.Labels "{OWNER_LABEL}"}}}}'
        "|{{range $net, $_ := .NetworkSettings.Networks}}{{$net}}{{end}}"
    )
    return [_container(line) for line in _run(["inspect", "--format", fmt, *names]).stdout.splitlines()]


def _container(line: str) -> Container:
    """A Container from one line of lab_containers' `docker inspect` format."""
    name, state, ip, owner, network = line.split("|")
    return Container(
        name.lstrip("/"), state, ip or None, None if owner == "<no value>" else owner, network or None
    )


def remove_container(name: str) -> None:
    """Force-remove a container, only if it carries the lab label."""
    done = _run(["inspect", "--format", f'{{{{index .Config.Labels "{LABEL}"}}}}', name], check=False)
    if done.returncode == 0 and done.stdout.strip() != "<no value>":
        _run(["rm", "--force", "--volumes", name], timeout=180)


def exec_in(
    name: str, argv: Sequence[str], *, check: bool = True, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run a command in a container as root.

    Raises:
        DockerError: with check, the command failed.
    """
    return _run(["exec", name, *argv], check=check, timeout=timeout)


def copy_into(name: str, src: Path, dest: str, *, timeout: float = 120) -> None:
    """Copy a file, or a folder's contents (`src/.`), into a container path."""
    source = f"{src}/." if src.is_dir() else str(src)
    _run(["cp", source, f"{name}:{dest}"], timeout=timeout)
