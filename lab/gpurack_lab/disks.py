"""Lab worker disks: sparse files under the lab state dir, attached as loop devices.

Only loop devices whose backing file lies under the lab's own folder are ever detached,
so the machine's real disks and other users' loops (Molecule) are never touched.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from gpurack.errors import ExitCode, GpurackError

DISK_SIZE = 1 << 30
DISKS_PER_WORKER = 2


class DiskError(GpurackError):
    """losetup failed; the message names the file or device."""

    code = ExitCode.FAILED


@dataclass(frozen=True, slots=True)
class Disk:
    """One lab disk: its backing file, host loop device and the name the container sees."""

    file: str
    loop: str
    device: str  # /dev/nvme0n1 inside the container


def _losetup(*args: str) -> str:
    done = subprocess.run(["losetup", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise DiskError(f"losetup {' '.join(args)} failed: {done.stderr.strip() or done.returncode}")
    return done.stdout.strip()


def create(folder: Path, count: int = DISKS_PER_WORKER, size: int = DISK_SIZE) -> list[Disk]:
    """Make `count` sparse files in folder and attach each to a free loop device.

    Raises:
        DiskError: no free loop device or losetup refused the file.
    """
    folder.mkdir(parents=True, exist_ok=True)
    disks: list[Disk] = []
    for i in range(count):
        path = folder / f"nvme{i}.img"
        with path.open("wb") as handle:
            handle.truncate(size)  # sparse: takes no space until written
        disks.append(Disk(str(path), _losetup("--find", "--show", str(path)), f"/dev/nvme{i}n1"))
    return disks


def attached_under(folder: Path) -> dict[str, str]:
    """Loop device -> backing file, for every loop backed by a file under folder."""
    done = subprocess.run(
        ["losetup", "--list", "--json", "--output", "NAME,BACK-FILE"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not done.stdout.strip():
        return {}
    prefix = str(folder.resolve()) + "/"
    found: dict[str, str] = {}
    for dev in json.loads(done.stdout).get("loopdevices", []):
        back = (dev.get("back-file") or "").removesuffix(" (deleted)")
        if back.startswith(prefix):
            found[dev["name"]] = back
    return found


def detach_under(folder: Path) -> list[str]:
    """Detach every loop backed by a file under folder (stopping md arrays on them); return them.

    Raises:
        DiskError: a loop could not be detached.
    """
    detached = []
    for loop in sorted(attached_under(folder)):
        # An md array built on the loops inside a container lives in the host kernel.
        for holder in Path(f"/sys/block/{Path(loop).name}/holders").glob("*"):
            state = holder / "md" / "array_state"
            if state.exists():
                state.write_text("clear\n")
        _losetup("--detach", loop)
        detached.append(loop)
    return detached
