"""module_utils/storage/scratch.py: the nvme_scratch probe over a fake block layer, and the pure planner."""

from __future__ import annotations

import os
import stat
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import CommandOutput
from ansible_collections.gpurack.bootstrap.plugins.module_utils.storage.scratch import (
    BlockSystem,
    Disk,
    PlanOptions,
    ProbeError,
    parse_blkid_export,
    parse_mountinfo,
    parse_swaps,
    plan,
    probe,
)

MD = "/dev/md/gpurack-scratch"
NODES = {
    "/dev/nvme0n1": (259, 0),
    "/dev/nvme0n1p1": (259, 1),
    "/dev/nvme1n1": (259, 2),
    "/dev/nvme2n1": (259, 3),
}
BLKID = {
    "/dev/nvme0n1": "PTTYPE=gpt\n",
    "/dev/nvme1n1": "",
    "/dev/nvme2n1": "TYPE=linux_raid_member\nLABEL=host:gpurack-scratch\n",
}


def _dir(path: Path, **files: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).write_text(text)
    return path


def _link(root: Path, devno: str, target: str) -> None:
    (root / "sys/dev/block").mkdir(parents=True, exist_ok=True)
    os.symlink(f"../../{target}", root / "sys/dev/block" / devno)


@pytest.fixture
def system(tmp_path: Path) -> BlockSystem:
    """nvme0n1 holds / on its partition, nvme1n1 is blank, nvme2n1 is our md member running as md127."""
    root = tmp_path
    disk0 = _dir(root / "sys/devices/pci/nvme/nvme0n1", dev="259:0")
    _dir(disk0 / "holders")
    _dir(disk0 / "nvme0n1p1", dev="259:1", partition="1")
    _dir(_dir(root / "sys/devices/pci/nvme/nvme1n1", dev="259:2") / "holders")
    disk2 = _dir(root / "sys/devices/pci/nvme/nvme2n1", dev="259:3")
    _dir(disk2 / "holders/md127")
    md = _dir(root / "sys/devices/virtual/block/md127", dev="9:127")
    os.symlink("../../../pci/nvme/nvme2n1", _dir(md / "slaves") / "nvme2n1")
    _dir(root / "sys/block/md127/md")
    for devno, target in [
        ("259:0", "devices/pci/nvme/nvme0n1"),
        ("259:1", "devices/pci/nvme/nvme0n1/nvme0n1p1"),
        ("259:2", "devices/pci/nvme/nvme1n1"),
        ("259:3", "devices/pci/nvme/nvme2n1"),
        ("9:127", "devices/virtual/block/md127"),
    ]:
        _link(root, devno, target)
    _dir(
        root / "proc/self",
        mountinfo="22 1 259:1 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p1 rw\n"
        "30 22 9:127 / /data rw - xfs /dev/md127 rw\n",
    )
    _dir(root / "proc", swaps="Filename Type Size Used Priority\n", mdstat="Personalities : [raid0]\n")

    def fake_stat(path: str) -> os.stat_result:
        """Device nodes cannot be made here: stat answers for the fake /dev alone."""
        if path not in NODES:
            raise FileNotFoundError(path)
        fake: Any = SimpleNamespace(st_mode=stat.S_IFBLK | 0o660, st_rdev=os.makedev(*NODES[path]), st_dev=0)
        return fake  # type: ignore[no-any-return]

    return BlockSystem(str(root), fake_stat)


def _blkid(argv: Any) -> CommandOutput:
    path = argv[-1]
    text = BLKID.get(path, "")
    return CommandOutput(rc=0 if text else 2, stdout=text)


def _by_path(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["path"]: d for d in found["disks"]}


def test_probe_finds_os_disk_through_its_partition(system: BlockSystem) -> None:
    disks = _by_path(probe(system, ["/dev/nvme0n1"], _blkid, "gpurack-scratch", "gpuscratch"))
    disk = disks["/dev/nvme0n1"]
    assert (disk["block"], disk["os_disk"], disk["partitions"], disk["mounted"]) == (
        True,
        True,
        ["nvme0n1p1"],
        ["/"],
    )
    assert (disk["fstype"], disk["free"], disk["ours"]) == ("gpt", False, False)


def test_probe_blank_disk_is_free(system: BlockSystem) -> None:
    found = probe(system, ["/dev/nvme1n1"], _blkid, "gpurack-scratch", "gpuscratch")
    disk = found["disks"][0]
    assert found["md_available"] is True
    assert (disk["devno"], disk["free"], disk["ours"], disk["holders"]) == ("259:2", True, False, [])


def test_probe_our_md_member_names_the_running_array(system: BlockSystem) -> None:
    disk = probe(system, ["/dev/nvme2n1"], _blkid, "gpurack-scratch", "gpuscratch")["disks"][0]
    assert (disk["ours"], disk["md_holder"], disk["holders"], disk["free"]) == (
        True,
        "/dev/md127",
        ["md127"],
        False,
    )


def test_probe_missing_path_is_not_a_block_device(system: BlockSystem) -> None:
    disk = probe(system, ["/dev/nvme9n1"], _blkid, "x", "y")["disks"][0]
    assert disk == asdict(Disk(path="/dev/nvme9n1"))


def test_probe_blkid_error_is_recorded_not_raised(system: BlockSystem) -> None:
    def failing(_argv: Any) -> CommandOutput:
        return CommandOutput(rc=2, stdout="", stderr="Permission denied")

    disk = probe(system, ["/dev/nvme1n1"], failing, "x", "y")["disks"][0]
    assert disk["probe_error"] == "blkid -p /dev/nvme1n1: rc=2 Permission denied"
    assert disk["free"] is False


def test_parse_blkid_export_rc_2_without_stderr_is_blank() -> None:
    assert parse_blkid_export("/dev/x", 2, "", "") == {}
    assert parse_blkid_export("/dev/x", 0, "TYPE=xfs\nLABEL=a=b\n", "") == {"TYPE": "xfs", "LABEL": "a=b"}
    with pytest.raises(ProbeError, match="rc=4"):
        parse_blkid_export("/dev/x", 4, "", "")


def test_parse_mountinfo_and_swaps() -> None:
    mounts = parse_mountinfo(
        "22 1 259:1 / / rw - ext4 /dev/nvme0n1p1 rw\n36 22 0:32 / /proc rw - proc proc rw\n"
    )
    assert [(m.devno, m.source, m.mountpoint) for m in mounts] == [
        ((259, 1), "/dev/nvme0n1p1", "/"),
        ((0, 32), "proc", "/proc"),
    ]
    assert parse_swaps("Filename Type Size Used Priority\n/swapfile file 1 0 -2\n") == ["/swapfile"]


def _disk(path: str, **fields: Any) -> dict[str, Any]:
    return asdict(Disk(path=path, exists=True, block=True, **fields))


def test_plan_two_free_disks_make_a_new_raid0() -> None:
    result = plan([_disk("/dev/a", free=True), _disk("/dev/b", free=True)], PlanOptions(md_device=MD))
    assert (result["layout"], result["members"], result["create"], result["target"]) == (
        "raid0",
        ["/dev/a", "/dev/b"],
        True,
        MD,
    )


def test_plan_one_free_disk_takes_xfs_directly() -> None:
    result = plan([_disk("/dev/a", free=True)], PlanOptions(md_device=MD))
    assert (result["layout"], result["target"], result["create"], result["unused"]) == (
        "single",
        "/dev/a",
        True,
        [],
    )


def test_plan_our_running_array_is_kept_where_it_runs() -> None:
    ours = [
        _disk(p, ours=True, fstype="linux_raid_member", md_holder="/dev/md127") for p in ("/dev/a", "/dev/b")
    ]
    result = plan([*ours, _disk("/dev/c", free=True)], PlanOptions(md_device=MD))
    assert (result["layout"], result["create"], result["running"], result["target"]) == (
        "raid0",
        False,
        "/dev/md127",
        "/dev/md127",
    )
    assert result["unused"] == ["/dev/c"]


def test_plan_our_xfs_keeps_the_single_disk() -> None:
    result = plan(
        [_disk("/dev/a", ours=True, fstype="xfs"), _disk("/dev/b", free=True)], PlanOptions(md_device=MD)
    )
    assert (result["layout"], result["members"], result["create"], result["unused"]) == (
        "single",
        ["/dev/a"],
        False,
        ["/dev/b"],
    )


def test_plan_busy_disks_are_skipped_unless_wiped() -> None:
    disks = [_disk("/dev/a", fstype="ext4"), _disk("/dev/b", partitions=["b1"], mounted=["/srv"])]
    kept = plan(disks, PlanOptions(md_device=MD))
    assert (kept["layout"], kept["busy"], kept["wipe"]) == ("none", ["/dev/a", "/dev/b"], [])
    assert kept["refused"] == ["/dev/a (signature ext4)", "/dev/b (partitions b1, mounted on /srv)"]
    wiped = plan(disks, PlanOptions(md_device=MD, wipe=True))
    assert (wiped["layout"], wiped["wipe"], wiped["members"]) == (
        "raid0",
        ["/dev/a", "/dev/b"],
        ["/dev/a", "/dev/b"],
    )


def test_plan_never_uses_os_disks_or_non_block_paths() -> None:
    disks = [_disk("/dev/a", os_disk=True), _disk("/dev/b", free=True), asdict(Disk(path="/dev/z"))]
    result = plan(disks, PlanOptions(md_device=MD, facts_os=("/dev/b",)))
    assert (result["os"], result["unusable"], result["layout"]) == (["/dev/a", "/dev/b"], ["/dev/z"], "none")
    assert result["refused"] == [
        "/dev/a (holds the OS)",
        "/dev/b (holds the OS)",
        "/dev/z (not a block device)",
    ]
