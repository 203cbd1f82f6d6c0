# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Scratch disks of the nvme_scratch role: probe the candidates, then plan the layout.

The probe says of each candidate whether it is a block device, holds the OS, is in use
(partitions, holders, mounts, signatures), or is ours (our md member or our labelled XFS).
Devices are looked up by device number through `sys/dev/block`, not by name, so a disk
that appears under another name (a loop device given to a container as /dev/nvme0n1) is
still found. The planner is pure: probe results in, layout out. Stdlib only; the
nvme_scratch module is the thin runner (docs/facts.md has the NVMe facts this sits beside).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import Runner
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nvme import OS_MOUNTPOINTS

Devno = tuple[int, int]
Stat = Callable[[str], os.stat_result]


class ProbeError(RuntimeError):
    """blkid could not say what a disk holds."""


@dataclass(frozen=True)
class Mount:
    """One line of /proc/self/mountinfo: the device number, the mount source and the mountpoint."""

    devno: Devno
    source: str
    mountpoint: str


def parse_devno(text: str) -> Devno:
    """`259:0` -> (259, 0)."""
    major, minor = text.strip().split(":")
    return int(major), int(minor)


def parse_mountinfo(text: str) -> list[Mount]:
    """Mounts of /proc/self/mountinfo (proc(5): field 3 is major:minor, 5 the mountpoint)."""
    mounts = []
    for line in text.splitlines():
        left, _dash, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) < 5:
            continue
        try:
            devno = parse_devno(fields[2])
        except ValueError:
            continue  # not a mountinfo line (field 3 is not major:minor)
        mounts.append(Mount(devno, rfields[1] if len(rfields) > 1 else "", fields[4]))
    return mounts


def parse_swaps(text: str) -> list[str]:
    """Swap files and devices of /proc/swaps (the first line is a header)."""
    return [line.split()[0] for line in text.splitlines()[1:] if line.strip()]


def parse_blkid_export(path: str, rc: int, stdout: str, stderr: str) -> dict[str, str]:
    """Signatures of `blkid -p -o export PATH`: {} when it holds no known signature.

    Raises:
        ProbeError: blkid failed. rc 2 is both "nothing found" and "could not read" (EPERM
            on a busy disk): only an empty stderr means the disk is blank.
    """
    if rc not in (0, 2) or stderr.strip():
        raise ProbeError(f"blkid -p {path}: rc={rc} {stderr.strip()}")
    return dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)


@dataclass
class Disk:
    """What the probe found about one candidate path (the role reads these keys)."""

    path: str
    exists: bool = False
    block: bool = False
    devno: str = ""
    os_disk: bool = False
    mounted: list[str] = field(default_factory=list)
    partitions: list[str] = field(default_factory=list)
    holders: list[str] = field(default_factory=list)
    md_holder: str = ""
    fstype: str = ""
    label: str = ""
    ours: bool = False
    free: bool = False
    probe_error: str = ""


def classify(disk: Disk, signatures: dict[str, str], md_name: str, fs_label: str) -> None:
    """Fill fstype, label, ours and free from blkid's signatures."""
    disk.fstype = signatures.get("TYPE", signatures.get("PTTYPE", ""))
    disk.label = signatures.get("LABEL", "")
    md_label = disk.label.split(":")[-1]
    disk.ours = (disk.fstype == "linux_raid_member" and md_label == md_name) or (
        disk.fstype == "xfs" and disk.label == fs_label
    )
    disk.free = not (disk.os_disk or disk.mounted or disk.partitions or disk.holders or signatures)


class BlockSystem:
    """The block layer of one node below `root`: sys/dev/block, sys/block, /proc mounts and swaps."""

    def __init__(self, root: str = "/", stat_path: Stat = os.stat) -> None:
        self.root = root
        self._stat = stat_path

    def _path(self, path: str) -> str:
        return os.path.join(self.root, path.lstrip("/"))

    def read(self, path: str) -> str:
        try:
            with open(self._path(path), encoding="utf-8") as handle:
                return handle.read().strip()
        except OSError:
            return ""

    def block_devno(self, path: str) -> Devno | None:
        """Device number of a block device node, None when absent or not a block device."""
        try:
            st = self._stat(path)
        except OSError:
            return None
        if not stat.S_ISBLK(st.st_mode):
            return None
        return os.major(st.st_rdev), os.minor(st.st_rdev)

    def file_devno(self, path: str) -> Devno | None:
        """Device number of the file system holding `path` (a swap file)."""
        try:
            st_dev = self._stat(path).st_dev
        except OSError:
            return None
        return os.major(st_dev), os.minor(st_dev)

    def sysdir(self, devno: Devno) -> str:
        """The real sysfs folder of a block device number ('' when the kernel has none)."""
        real = os.path.realpath(self._path("/sys/dev/block/{}:{}".format(*devno)))
        return real if os.path.isdir(real) else ""

    def listdir(self, path: str) -> list[str]:
        try:
            return sorted(os.listdir(path))
        except OSError:
            return []

    def is_md(self, name: str) -> bool:
        return os.path.isdir(self._path(f"/sys/block/{name}/md"))

    def md_available(self) -> bool:
        return os.path.exists(self._path("/proc/mdstat"))


def whole_disks(system: BlockSystem, devno: Devno, seen: set[Devno] | None = None) -> set[Devno]:
    """Whole disks under a block device: partitions map to their disk, md/dm to their slaves."""
    seen = set() if seen is None else seen
    if devno in seen:
        return set()
    seen.add(devno)
    path = system.sysdir(devno)
    if not path:
        return set()
    if os.path.exists(os.path.join(path, "partition")):
        parent = _read_abs(os.path.join(os.path.dirname(path), "dev"))
        return whole_disks(system, parse_devno(parent), seen) if parent else set()
    slaves = os.path.join(path, "slaves")
    names = system.listdir(slaves)
    if not names:
        return {devno}
    disks: set[Devno] = set()
    for name in names:
        dev = _read_abs(os.path.join(slaves, name, "dev"))
        if dev:
            disks |= whole_disks(system, parse_devno(dev), seen)
    return disks


def _read_abs(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def os_disks(system: BlockSystem, mounts: Iterable[Mount], swaps: Iterable[str]) -> set[Devno]:
    """Whole disks behind the OS mountpoints (by devno and by /dev source) and the swap areas."""
    disks: set[Devno] = set()
    for mount in mounts:
        if mount.mountpoint in OS_MOUNTPOINTS:
            disks |= whole_disks(system, mount.devno)
            source = system.block_devno(mount.source) if mount.source.startswith("/dev/") else None
            if source:
                disks |= whole_disks(system, source)
    for name in swaps:
        source = system.block_devno(name) or system.file_devno(name)
        if source:
            disks |= whole_disks(system, source)
    return disks


def describe(system: BlockSystem, path: str, runner: Runner, context: ProbeContext) -> Disk:
    """Probe one candidate path."""
    disk = Disk(path=path, exists=os.path.exists(path))
    devno = system.block_devno(path)
    if devno is None:
        return disk
    disk.block, disk.devno = True, "{}:{}".format(*devno)
    real = system.sysdir(devno)
    disk.partitions = [n for n in system.listdir(real) if os.path.exists(os.path.join(real, n, "partition"))]
    part_devnos = {parse_devno(_read_abs(os.path.join(real, n, "dev"))) for n in disk.partitions}
    disk.holders = system.listdir(os.path.join(real, "holders"))
    # The running md array that holds this disk, whatever name it was assembled under (an
    # initramfs without our mdadm.conf line assembles it as /dev/md127).
    md_holders = [name for name in disk.holders if system.is_md(name)]
    disk.md_holder = "/dev/" + md_holders[0] if md_holders else ""
    disk.os_disk = devno in context.os_set
    disk.mounted = sorted(
        {m.mountpoint for m in context.mounts if m.devno == devno or m.devno in part_devnos}
    )
    out = runner(["blkid", "-p", "-o", "export", path])
    try:
        signatures = parse_blkid_export(path, out.rc, out.stdout, out.stderr)
    except ProbeError as exc:
        disk.probe_error = str(exc)
        return disk
    classify(disk, signatures, context.md_name, context.fs_label)
    return disk


@dataclass(frozen=True)
class ProbeContext:
    """What every candidate's probe shares: the mounts, the OS disks and our names."""

    mounts: tuple[Mount, ...]
    os_set: frozenset[Devno]
    md_name: str
    fs_label: str


def probe(
    system: BlockSystem, paths: list[str], runner: Runner, md_name: str, fs_label: str
) -> dict[str, Any]:
    """`{md_available, disks}` for the candidate paths (read-only)."""
    mounts = tuple(parse_mountinfo(system.read("/proc/self/mountinfo")))
    swaps = parse_swaps(system.read("/proc/swaps"))
    context = ProbeContext(mounts, frozenset(os_disks(system, mounts, swaps)), md_name, fs_label)
    return {
        "md_available": system.md_available(),
        "disks": [asdict(describe(system, path, runner, context)) for path in paths],
    }


@dataclass(frozen=True)
class PlanOptions:
    """The role's inputs the plan depends on."""

    md_device: str
    wipe: bool = False
    facts_os: tuple[str, ...] = ()  # /dev paths gpurack_nvme marks as OS disks (when preflight ran)


def plan(disks: list[dict[str, Any]], options: PlanOptions) -> dict[str, Any]:
    """The layout over probed disks: os (never used), unusable (not a block device), ours (our
    md member or labelled XFS), free (blank), busy (the rest, wiped only when asked)."""
    block = [d for d in disks if d["block"]]
    os_used = [d for d in block if d["os_disk"]] + [
        d for d in block if not d["os_disk"] and d["path"] in options.facts_os
    ]
    usable = [d for d in block if d not in os_used]
    ours = [d for d in usable if d["ours"]]
    busy = [d["path"] for d in usable if not d["ours"] and not d["free"]]
    new = [d["path"] for d in usable if not d["ours"] and d["free"]] + (busy if options.wipe else [])
    ours_md = [d for d in ours if d["fstype"] == "linux_raid_member"]
    ours_fs = [d["path"] for d in ours if d["fstype"] == "xfs"]
    members = [d["path"] for d in ours_md] or ours_fs[:1] or new
    layout = "raid0" if ours_md or (not ours_fs and len(new) > 1) else ("single" if members else "none")
    # An array of ours already running under another name (assembled by an initramfs without
    # our mdadm.conf line) is used where it is, not assembled a second time.
    running_md = list(dict.fromkeys(d["md_holder"] for d in ours_md if d["md_holder"]))
    running = running_md[0] if len(running_md) == 1 else ""
    single = members[0] if members else ""
    target = (running or options.md_device) if layout == "raid0" else single
    return {
        "unusable": [d["path"] for d in disks if not d["block"]],
        "os": [d["path"] for d in os_used],
        "ours": [d["path"] for d in ours],
        "busy": busy,
        "wipe": busy if options.wipe else [],
        "layout": layout,
        "members": members,
        "create": not ours and bool(members),
        "running": running,
        "target": target,
        "unused": [d["path"] for d in usable if d["path"] not in members],
        "refused": refusals(disks, os_used, busy),
    }


def refusals(disks: list[dict[str, Any]], os_used: list[dict[str, Any]], busy: list[str]) -> list[str]:
    """`path (why)` for each disk an explicit list must not name: not a block device, the OS, or busy."""
    os_paths = [d["path"] for d in os_used]
    lines = []
    for disk in disks:
        if not disk["block"]:
            lines.append(f"{disk['path']} (not a block device)")
        elif disk["path"] in os_paths:
            lines.append(f"{disk['path']} (holds the OS)")
        elif disk["path"] in busy:
            lines.append(f"{disk['path']} ({disk['probe_error'] or _busy_reason(disk)})")
    return lines


def _busy_reason(disk: dict[str, Any]) -> str:
    parts = [
        ("partitions " + ",".join(disk["partitions"])) if disk["partitions"] else "",
        ("signature " + disk["fstype"]) if disk["fstype"] else "",
        ("holders " + ",".join(disk["holders"])) if disk["holders"] else "",
        ("mounted on " + ",".join(disk["mounted"])) if disk["mounted"] else "",
    ]
    return ", ".join(p for p in parts if p)
