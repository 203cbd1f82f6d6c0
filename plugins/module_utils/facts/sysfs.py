# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Mirror the sysfs attributes a capture needs (`sys/...` in a bundle) as plain files.

The one implementation, stdlib only: `gpurack capture` writes the mirror into its bundle
folder, the capture role's capture_bundle module into a tar.gz on the node that the role
fetches. sysfs cannot be archived as it is (attributes report 4096 bytes, links point
everywhere), so attributes are read one by one and written through a `Sink`.
"""

from __future__ import annotations

import fnmatch
import glob
import io
import os
import stat
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import CAPTURE_SYSFS, SysfsTree

MAX_ATTR_BYTES = 64 * 1024

# PCI devices worth keeping: NVIDIA GPUs and NVSwitches, Mellanox/NVIDIA NICs, NVMe controllers.
PCI_VENDORS = frozenset({"0x10de", "0x15b3"})
PCI_CLASS_PREFIXES = ("0x0108",)
_PCI_GLOB = "sys/bus/pci/devices/*"

# Folders below a device that are large, noisy or not attributes (kernel sections, GID tables...).
SKIP_DIRS = frozenset(
    {"sections", "notes", "gids", "pkeys", "gid_attrs", "trace", "msi_irqs", "queues", "power", "mq"}
)
# Files whose read has side effects, is binary, slow or meaningless outside the host.
SKIP_FILES = ("config", "rom", "vpd", "resource*", "reset*", "remove*", "rescan", "*bind", "new_id")

# Receives one attribute: its path relative to the node's root (`sys/class/net/eth0/mtu`) and bytes.
Sink = Callable[[PurePosixPath, bytes], None]


@dataclass(frozen=True)
class MirrorStats:
    """What a sysfs mirror copied."""

    entries: int
    files: int


def mirror_sysfs(root: Path, dest: Path) -> MirrorStats:
    """Copy the attributes of CAPTURE_SYSFS from `root` into the folder `dest` (`dest/sys/...`)."""
    return mirror(root, FolderSink(dest))


def mirror(root: Path, sink: Sink, trees: tuple[SysfsTree, ...] = CAPTURE_SYSFS) -> MirrorStats:
    """Send every readable attribute below the matches of `trees` to `sink`; unreadable ones are left out."""
    entries = files = 0
    for tree in trees:
        for entry in _matches(root, tree.glob):
            copied = _copy_entry(root, entry, sink, tree.depth)
            if copied:
                entries += 1
                files += copied
    return MirrorStats(entries=entries, files=files)


class FolderSink:
    """A Sink that writes each file below a folder, creating its parents."""

    def __init__(self, dest: Path) -> None:
        self._dest = dest

    def __call__(self, rel: PurePosixPath, data: bytes) -> None:
        target = self._dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


class TarSink:
    """A Sink that adds regular files (0644) and their folders (0755) to an open tar."""

    def __init__(self, tar: tarfile.TarFile) -> None:
        self._tar = tar
        self._folders: set[PurePosixPath] = set()
        self._mtime = time.time()

    def folder(self, path: PurePosixPath) -> None:
        """Add `path` and its parents as folders, once each."""
        for parent in [*reversed(path.parents[:-1]), path]:
            if parent not in self._folders:
                self._folders.add(parent)
                info = tarfile.TarInfo(str(parent))
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, self._mtime
                self._tar.addfile(info)

    def __call__(self, rel: PurePosixPath, data: bytes) -> None:
        self.folder(rel.parent)
        info = tarfile.TarInfo(str(rel))
        info.size, info.mode, info.mtime = len(data), 0o644, self._mtime
        self._tar.addfile(info, io.BytesIO(data))


def _matches(root: Path, pattern: str) -> list[Path]:
    """Sorted paths below root matching a sysfs glob, PCI devices filtered to the vendors we keep."""
    found = [Path(p) for p in sorted(glob.glob(os.path.join(glob.escape(str(root)), pattern)))]
    if pattern == _PCI_GLOB:
        found = [p for p in found if _wanted_pci(p)]
    return found


def _wanted_pci(device: Path) -> bool:
    """True for NVIDIA, Mellanox and NVMe-class PCI functions."""
    vendor = (_read_attr(device / "vendor") or b"").decode(errors="replace").strip().lower()
    pci_class = (_read_attr(device / "class") or b"").decode(errors="replace").strip().lower()
    return vendor in PCI_VENDORS or pci_class.startswith(PCI_CLASS_PREFIXES)


def _copy_entry(root: Path, entry: Path, sink: Sink, depth: int) -> int:
    """Copy one matched entry (resolving its /sys/devices symlink) and its `device` link's attributes."""
    real = _inside(root, entry)
    if real is None:
        return 0
    rel = PurePosixPath(entry.relative_to(root).as_posix())
    copied = _copy_tree(real, rel, sink, depth)
    device = entry / "device"
    if device.is_symlink():
        device_real = _inside(root, device)
        if device_real is not None:
            copied += _copy_tree(device_real, rel / "device", sink, 0)
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


def _copy_tree(src: Path, rel: PurePosixPath, sink: Sink, depth: int) -> int:
    """Copy readable small regular files of src, descending real folders up to `depth` levels."""
    try:
        children = sorted(os.scandir(src), key=lambda e: e.name)
    except OSError:
        return 0
    copied = 0
    for child in children:
        if child.is_dir(follow_symlinks=False):
            if depth > 0 and child.name not in SKIP_DIRS:
                copied += _copy_tree(Path(child.path), rel / child.name, sink, depth - 1)
        elif child.is_file(follow_symlinks=False) and _copyable(child):
            data = _read_attr(Path(child.path))
            if data is not None:
                sink(rel / child.name, data)
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
