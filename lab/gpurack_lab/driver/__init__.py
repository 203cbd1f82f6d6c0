"""The lab's host-managed NVIDIA driver: a stand-in repository and an emulated kernel module.

Lab workers run the nvidia_driver role in its host mode against the stand-in packages that
Molecule builds (molecule/resources/standin-repo/build.sh, with one newer 580 release for
the patch test), copied into each container at /srv/gpurack-lab/nvidia-repo. The packages
hold no driver, so this package also emulates what the kernel does with one:

- the first driver installed after a boot "loads" (as the role's modprobe of a fresh
  install does), and a loaded driver is replaced only by a reboot, which restarts the
  container (load-driver.sh, run at boot and whenever dpkg's status changes);
- the loaded version is written where the kernel would show it,
  /run/gpurack-lab/nvidia/version (the lab's nvidia_driver_module_version_file), and
  replaces the captured driver version in the container's profile, so nvidia-smi and the
  facts modules report the driver the node booted with.

Never used on real machines, never referenced from roles/.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from gpurack.errors import ExitCode, GpurackError
from gpurack.project import project_root

from gpurack_lab import docker

# The stand-in releases: 580.95.05 is what site.yml pins, 580.105.08 the patch, 590 a newer branch.
DRIVER_VERSIONS = ("580.95.05-1", "580.105.08-1", "590.48.01-1")
CONTAINER_REPO = "/srv/gpurack-lab/nvidia-repo"
CONTAINER_LOADER = "/usr/local/lib/gpurack-lab/load-driver.sh"
CONTAINER_CAPTURED = "/opt/gpurack-lab/captured-driver-version"
UNIT_DIR = "/etc/systemd/system"
UNITS = ("gpurack-lab-nvidia-module.service", "gpurack-lab-nvidia-module.path")
HERE = Path(__file__).resolve().parent
# How `nvidia-smi -q -x` and `nvidia-smi -q` show the driver version.
_DRIVER_VERSION = {
    "nvidia-smi-q.xml": re.compile(r"<driver_version>\s*([0-9][0-9.]*)\s*</driver_version>"),
    "nvidia-smi-q.txt": re.compile(r"^Driver Version\s*:\s*([0-9][0-9.]*)\s*$", re.MULTILINE),
}


class DriverRepoError(GpurackError):
    """The stand-in repository could not be built."""

    code = ExitCode.FAILED


def build_script() -> Path:
    """Molecule's stand-in repository builder, which the lab reuses."""
    return project_root() / "molecule" / "resources" / "standin-repo" / "build.sh"


def ensure_repo(folder: Path) -> Path:
    """Build the signed stand-in repository into `folder` once; return it.

    Raises:
        DriverRepoError: build.sh failed (it needs dpkg-deb, gpg and apt-ftparchive or
            dpkg-scanpackages).
    """
    if (folder / "InRelease").is_file() and (folder / "standin.asc").is_file():
        return folder
    env = {**os.environ, "STANDIN_DRIVER_VERSIONS": " ".join(DRIVER_VERSIONS)}
    done = subprocess.run(
        ["bash", str(build_script()), str(folder)], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"rc {done.returncode}"])[-1]
        raise DriverRepoError(f"building the stand-in NVIDIA repository failed: {last}")
    return folder


def repo_key(folder: Path) -> str:
    """The repository's armored public key (a throwaway key made per build)."""
    return (folder / "standin.asc").read_text(encoding="utf-8")


def captured_driver_version(profile: Path) -> str | None:
    """The driver version the profile's capture recorded (`nvidia-smi -q -x` or `-q`), if any."""
    for filename, pattern in _DRIVER_VERSION.items():
        path = profile / filename
        found = pattern.search(path.read_text(encoding="utf-8", errors="replace")) if path.is_file() else None
        if found:
            return found.group(1)
    return None


def install(name: str, repo: Path, profile: Path) -> None:
    """Copy the repository and the module emulation into container `name` and start it."""
    folders = {str(Path(CONTAINER_REPO).parent), str(Path(CONTAINER_LOADER).parent)}
    docker.exec_in(name, ["mkdir", "-p", *sorted(folders)])
    docker.copy_into(name, repo, CONTAINER_REPO)
    docker.copy_into(name, HERE / "load-driver.sh", CONTAINER_LOADER)
    docker.exec_in(name, ["chmod", "755", CONTAINER_LOADER])
    captured = captured_driver_version(profile)
    if captured:
        local = profile.parent / "captured-driver-version"
        local.write_text(captured + "\n", encoding="utf-8")
        docker.copy_into(name, local, CONTAINER_CAPTURED)
    for unit in UNITS:
        docker.copy_into(name, HERE / unit, f"{UNIT_DIR}/{unit}")
    docker.exec_in(name, ["systemctl", "daemon-reload"])
    docker.exec_in(name, ["systemctl", "enable", "--now", *UNITS])
