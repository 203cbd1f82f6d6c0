# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What a host holds right now, each item as one comparable string: a file's or folder's
owner, mode and content, a mount's source and type, a package's version and status, a
service's enablement and state. The parsers take command output, so they run without a host.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

ABSENT = "absent"


@dataclass(frozen=True, slots=True)
class Probe:
    """What a role manages on a host, so that a change to any of it re-runs the role."""

    paths: tuple[str, ...] = ()
    mounts: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    services: tuple[str, ...] = ()
    fstab: tuple[str, ...] = ()

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Probe:
        """From the module's `probe` option; an unknown key is refused, not ignored."""
        unknown = sorted(set(data) - set(cls.__slots__))
        if unknown:
            known = ", ".join(cls.__slots__)
            raise ValueError(f"probe: unknown keys {', '.join(unknown)} (known: {known})")
        return cls(**{key: tuple(str(item) for item in data.get(key) or ()) for key in data})

    def to_mapping(self) -> dict[str, list[str]]:
        """The kinds this probe reads, for keeping it with a stamp and comparing it with another."""
        return {key: list(getattr(self, key)) for key in self.__slots__ if getattr(self, key)}


def path_state(path: str) -> str:
    """`absent`, `dir MODE UID:GID`, `link -> TARGET`, `block|char MODE UID:GID MAJOR:MINOR`, or
    `file MODE UID:GID SHA256` (a /proc or /sys value is read like a file)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return ABSENT
    if stat.S_ISLNK(info.st_mode):
        return f"link -> {os.readlink(path)}"
    owner = f"{stat.S_IMODE(info.st_mode):04o} {info.st_uid}:{info.st_gid}"
    if stat.S_ISDIR(info.st_mode):
        return f"dir {owner}"
    if stat.S_ISBLK(info.st_mode) or stat.S_ISCHR(info.st_mode):
        # Never read a device: a disk would be read whole. Its number says which one it is.
        kind = "block" if stat.S_ISBLK(info.st_mode) else "char"
        return f"{kind} {owner} {os.major(info.st_rdev)}:{os.minor(info.st_rdev)}"
    if not stat.S_ISREG(info.st_mode):
        return f"special {owner}"
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            sha.update(block)
    return f"file {owner} {sha.hexdigest()}"


def _unescape(field: str) -> str:
    """/proc/self/mountinfo writes space, tab, newline and backslash as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def mount_states(mountinfo: str, mountpoints: Iterable[str]) -> dict[str, str]:
    """Each mount point's `SOURCE FSTYPE ROOT` from /proc/self/mountinfo (the last mount wins)."""
    found: dict[str, str] = {}
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 2:
            continue
        found[_unescape(fields[4])] = f"{_unescape(tail[1])} {tail[0]} {_unescape(fields[3])}"
    return {point: found.get(point, ABSENT) for point in mountpoints}


def fstab_states(fstab: str, fstypes: Iterable[str]) -> dict[str, str]:
    """Each filesystem type's entries in use in /etc/fstab (comments left out), or `none`."""
    entries: dict[str, list[str]] = {}
    for line in fstab.splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) >= 3:
            entries.setdefault(fields[2], []).append(" ".join(fields[:4]))
    return {fstype: "; ".join(entries.get(fstype, [])) or "none" for fstype in fstypes}


def package_states(query_output: str, names: Iterable[str]) -> dict[str, str]:
    """Each package's `VERSION STATUS` from tab-separated `dpkg-query -W` (package, version,
    status abbreviation) or `rpm -q --qf` output; a package not listed is absent."""
    found: dict[str, str] = {}
    for line in query_output.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[1]:
            found[parts[0].split(":")[0]] = f"{parts[1]} {parts[2].strip()}"
    return {name: found.get(name, ABSENT) for name in names}


def service_states(show_output: str, names: Iterable[str]) -> dict[str, str]:
    """Each unit's `UNITFILESTATE ACTIVESTATE` from `systemctl show` (Id, UnitFileState, ActiveState)."""
    found: dict[str, str] = {}
    for block in show_output.split("\n\n"):
        props = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
        if props.get("Id"):
            found[props["Id"]] = f"{props.get('UnitFileState') or '-'} {props.get('ActiveState') or '-'}"
    return {name: found.get(name if "." in name else f"{name}.service", ABSENT) for name in names}
