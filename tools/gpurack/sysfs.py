"""Mirror the sysfs attributes a capture needs into `<capture>/sys/...` as plain files."""

from __future__ import annotations

import fnmatch
import glob
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ansible_collections.gpurack.bootstrap.plugins.module_utils._capture import CAPTURE_SYSFS_GLOBS

MAX_ATTR_BYTES = 64 * 1024

# PCI devices worth keeping: NVIDIA GPUs and NVSwitches, Mellanox/NVIDIA NICs, NVMe controllers.
PCI_VENDORS = frozenset({"0x10de", "0x15b3"})
PCI_CLASS_PREFIXES = ("0x0108",)

# Folders below a device that are large, noisy or not attributes (kernel sections, GID tables...).
SKIP_DIRS = frozenset(
    {"sections", "notes", "gids", "pkeys", "gid_attrs", "trace", "msi_irqs", "queues", "power", "mq"}
)
# Files whose read has side effects, is binary, slow or meaningless outside the host.
SKIP_FILES = ("config", "rom", "vpd", "resource*", "reset*", "remove*", "rescan", "*bind", "new_id")

# Folder levels copied below each matched entry; attributes the gatherers read sit at these depths
# (infiniband: ports/1/counters/<name>; block: queue/rotational; node and cgroup: top level only).
_DEPTHS: dict[str, int] = {
    "sys/bus/pci/devices/*": 0,
    "sys/class/infiniband/*": 3,
    "sys/devices/system/node/node*": 0,
    "sys/fs/cgroup": 0,
}
_DEFAULT_DEPTH = 1


@dataclass(frozen=True, slots=True)
class MirrorStats:
    """What a sysfs mirror copied."""

    entries: int
    files: int


def mirror_sysfs(root: Path, dest: Path) -> MirrorStats:
    """Copy the attributes under CAPTURE_SYSFS_GLOBS from `root` into `dest`, skipping unreadable ones."""
    entries = files = 0
    for pattern in CAPTURE_SYSFS_GLOBS:
        for entry in _matches(root, pattern):
            rel = entry.relative_to(root)
            copied = _copy_entry(root, entry, dest / rel, _DEPTHS.get(pattern, _DEFAULT_DEPTH))
            if copied:
                entries += 1
                files += copied
    return MirrorStats(entries=entries, files=files)


def _matches(root: Path, pattern: str) -> list[Path]:
    """Sorted paths below root matching a sysfs glob, PCI devices filtered to the vendors we keep."""
    found = [Path(p) for p in sorted(glob.glob(os.path.join(glob.escape(str(root)), pattern)))]
    if pattern == "sys/bus/pci/devices/*":
        found = [p for p in found if _wanted_pci(p)]
    return found


def _wanted_pci(device: Path) -> bool:
    """True for NVIDIA, Mellanox and NVMe-class PCI functions."""
    vendor = (_read_attr(device / "vendor") or b"").decode(errors="replace").strip().lower()
    pci_class = (_read_attr(device / "class") or b"").decode(errors="replace").strip().lower()
    return vendor in PCI_VENDORS or pci_class.startswith(PCI_CLASS_PREFIXES)


def _copy_entry(root: Path, entry: Path, target: Path, depth: int) -> int:
    """Copy one matched entry (resolving its /sys/devices symlink) and its `device` link's attributes."""
    real = _inside(root, entry)
    if real is None:
        return 0
    copied = _copy_tree(real, target, depth)
    device = entry / "device"
    if device.is_symlink():
        device_real = _inside(root, device)
        if device_real is not None:
            copied += _copy_tree(device_real, target / "device", 0)
    return copied


def _inside(root: Path, path: Path) -> Path | None:
    """The resolved folder of `path` when it stays below root/sys, else None (never leave the tree)."""
    try:
        real = path.resolve(strict=True)
    except OSError:
        return None
    sys_root = (root / "sys").resolve()
    if not real.is_dir() or not real.is_relative_to(sys_root):
        return None
    return real


def _copy_tree(src: Path, target: Path, depth: int) -> int:
    """Copy readable small regular files of src, descending real folders up to `depth` levels."""
    try:
        children = sorted(os.scandir(src), key=lambda e: e.name)
    except OSError:
        return 0
    copied = 0
    for child in children:
        if child.is_dir(follow_symlinks=False):
            if depth > 0 and child.name not in SKIP_DIRS:
                copied += _copy_tree(Path(child.path), target / child.name, depth - 1)
        elif child.is_file(follow_symlinks=False) and _copyable(child):
            data = _read_attr(Path(child.path))
            if data is not None:
                target.mkdir(parents=True, exist_ok=True)
                (target / child.name).write_bytes(data)
                copied += 1
    return copied


def _copyable(child: os.DirEntry[str]) -> bool:
    """True for attributes somebody may read: a read bit set and not on the skip list."""
    if any(fnmatch.fnmatchcase(child.name, pat) for pat in SKIP_FILES):
        return False
    try:
        mode = child.stat(follow_symlinks=False).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) and bool(mode & (stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH))


def _read_attr(path: Path) -> bytes | None:
    """Bytes of one attribute, None when unreadable or larger than MAX_ATTR_BYTES."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_ATTR_BYTES + 1)
    except OSError:
        # sysfs reads fail with EIO/EINVAL/EPERM on some attributes: a capture just lacks them.
        return None
    return data if len(data) <= MAX_ATTR_BYTES else None
