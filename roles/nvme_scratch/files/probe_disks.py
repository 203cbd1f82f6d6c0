#!/usr/bin/python3
"""Describe candidate scratch disks as JSON: present, holding the OS, in use, or ours.

Usage: probe_disks.py MD_NAME FS_LABEL DEVICE...   (read-only; runs on the node)

Devices are looked up by device number through /sys/dev/block, not by name, so a disk
that appears under another name (a loop device given to a container as /dev/nvme0n1)
is still found.
"""

import json
import os
import stat
import subprocess
import sys

OS_MOUNTPOINTS = ("/", "/boot", "/boot/efi", "/usr", "/var")


def sysdir(devno):
    return "/sys/dev/block/{}:{}".format(*devno)


def read(path, default=""):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return default


def parse_devno(text):
    major, minor = text.split(":")
    return int(major), int(minor)


def block_devno(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    return os.major(st.st_rdev), os.minor(st.st_rdev)


def whole_disks(devno, seen=None):
    """Whole disks under a block device: partitions map to their disk, md/dm to their slaves."""
    seen = set() if seen is None else seen
    if devno in seen:
        return set()
    seen.add(devno)
    path = os.path.realpath(sysdir(devno))
    if not os.path.isdir(path):
        return set()
    if os.path.exists(os.path.join(path, "partition")):
        parent = read(os.path.join(os.path.dirname(path), "dev"))
        return whole_disks(parse_devno(parent), seen) if parent else set()
    slaves = os.path.join(path, "slaves")
    names = os.listdir(slaves) if os.path.isdir(slaves) else []
    if not names:
        return {devno}
    disks = set()
    for name in names:
        dev = read(os.path.join(slaves, name, "dev"))
        if dev:
            disks |= whole_disks(parse_devno(dev), seen)
    return disks


def mounts():
    """(devno, source, mountpoint) for each mount of this mount namespace."""
    result = []
    for line in read("/proc/self/mountinfo").splitlines():
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        result.append((parse_devno(fields[2]), rfields[1] if len(rfields) > 1 else "", fields[4]))
    return result


def os_disks(mount_table):
    disks = set()
    for devno, source, mountpoint in mount_table:
        if mountpoint in OS_MOUNTPOINTS:
            disks |= whole_disks(devno)
            src = block_devno(source) if source.startswith("/dev/") else None
            if src:
                disks |= whole_disks(src)
    for line in read("/proc/swaps").splitlines()[1:]:
        name = line.split()[0]
        src = block_devno(name)
        if src is None:
            try:
                st_dev = os.stat(name).st_dev
                src = (os.major(st_dev), os.minor(st_dev))
            except OSError:
                continue
        disks |= whole_disks(src)
    return disks


def signatures(path):
    """blkid's low-level probe of PATH: {} when it holds no known signature."""
    proc = subprocess.run(["blkid", "-p", "-o", "export", path], capture_output=True, text=True, check=False)
    # rc 2 is both "nothing found" and "could not read" (EPERM on a busy disk): only an
    # empty stderr means the disk is blank.
    if proc.returncode not in (0, 2) or proc.stderr.strip():
        raise RuntimeError(f"blkid -p {path}: rc={proc.returncode} {proc.stderr.strip()}")
    return dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)


def describe(path, md_name, fs_label, os_set, mount_table):
    disk = {
        "path": path,
        "exists": os.path.exists(path),
        "block": False,
        "os_disk": False,
        "mounted": [],
        "partitions": [],
        "holders": [],
        "md_holder": "",
        "fstype": "",
        "label": "",
        "ours": False,
        "free": False,
        "probe_error": "",
    }
    devno = block_devno(path)
    if devno is None:
        return disk
    disk["block"] = True
    disk["devno"] = "{}:{}".format(*devno)
    real = os.path.realpath(sysdir(devno))
    disk["partitions"] = sorted(
        name for name in os.listdir(real) if os.path.exists(os.path.join(real, name, "partition"))
    )
    part_devnos = {parse_devno(read(os.path.join(real, name, "dev"))) for name in disk["partitions"]}
    disk["holders"] = sorted(os.listdir(os.path.join(real, "holders")))
    # The running md array that holds this disk, whatever name it was assembled under (an
    # initramfs without our mdadm.conf line assembles it as /dev/md127).
    md_holders = [name for name in disk["holders"] if os.path.isdir(os.path.join("/sys/block", name, "md"))]
    disk["md_holder"] = "/dev/" + md_holders[0] if md_holders else ""
    disk["os_disk"] = devno in os_set
    disk["mounted"] = sorted({mp for dn, _, mp in mount_table if dn == devno or dn in part_devnos})
    try:
        sig = signatures(path)
    except RuntimeError as exc:
        disk["probe_error"] = str(exc)
        return disk
    disk["fstype"], disk["label"] = sig.get("TYPE", sig.get("PTTYPE", "")), sig.get("LABEL", "")
    md_label = disk["label"].split(":")[-1]
    disk["ours"] = (disk["fstype"] == "linux_raid_member" and md_label == md_name) or (
        disk["fstype"] == "xfs" and disk["label"] == fs_label
    )
    disk["free"] = not (disk["os_disk"] or disk["mounted"] or disk["partitions"] or disk["holders"] or sig)
    return disk


def main(argv):
    md_name, fs_label, paths = argv[1], argv[2], argv[3:]
    mount_table = mounts()
    os_set = os_disks(mount_table)
    json.dump(
        {
            "md_available": os.path.exists("/proc/mdstat"),
            "disks": [describe(path, md_name, fs_label, os_set, mount_table) for path in paths],
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
