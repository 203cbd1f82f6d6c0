"""The one sysfs mirror (module_utils/facts/sysfs.py) over a fake sysfs tree: folder and archive alike."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import SysfsTree
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.sysfs import (
    MAX_ATTR_BYTES,
    MirrorStats,
    TarSink,
    mirror,
    mirror_sysfs,
)
from fake_sysfs import make_fake_root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = make_fake_root(tmp_path / "root")
    ib = root / "sys/devices/pci0000:00/0000:00:07.0/infiniband/mlx5_0"
    (ib / "ports/1/counters/deeper").mkdir(parents=True)
    (ib / "ports/1/counters/port_rcv_errors").write_text("0\n")
    (ib / "ports/1/counters/deeper/too_deep").write_text("x\n")
    (ib / "ports/1/gids").mkdir()
    (ib / "ports/1/gids/0").write_text("fe80::\n")
    (ib / "node_guid").write_text("0x1\n")
    (ib / "huge").write_bytes(b"x" * (MAX_ATTR_BYTES + 1))
    (root / "sys/class/infiniband").mkdir(parents=True)
    os.symlink(
        "../../devices/pci0000:00/0000:00:07.0/infiniband/mlx5_0", root / "sys/class/infiniband/mlx5_0"
    )
    return root


def _archive(root: Path, archive: Path) -> MirrorStats:
    with tarfile.open(archive, "w:gz") as tar:
        return mirror(root, TarSink(tar))


def _tree(base: Path) -> dict[str, bytes]:
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


def test_mirror_sysfs_keeps_only_nvidia_mellanox_and_nvme_pci(root: Path, tmp_path: Path) -> None:
    mirror_sysfs(root, tmp_path / "out")
    pci = tmp_path / "out/sys/bus/pci/devices"
    assert sorted(p.name for p in pci.iterdir()) == ["0000:00:06.0", "0000:00:07.0"]
    assert (pci / "0000:00:06.0/current_link_width").read_text() == "16\n"


def test_mirror_sysfs_skips_binary_write_only_noise_and_oversized(root: Path, tmp_path: Path) -> None:
    mirror_sysfs(root, tmp_path / "out")
    gpu = tmp_path / "out/sys/bus/pci/devices/0000:00:06.0"
    assert not (gpu / "config").exists()
    assert not (gpu / "remove").exists()
    assert not (gpu / "power").exists()
    assert not (tmp_path / "out/sys/class/infiniband/mlx5_0/huge").exists()


def test_mirror_sysfs_caps_depth_per_tree_and_skips_gid_tables(root: Path, tmp_path: Path) -> None:
    mirror_sysfs(root, tmp_path / "out")
    ib = tmp_path / "out/sys/class/infiniband/mlx5_0"
    assert (ib / "ports/1/counters/port_rcv_errors").read_text() == "0\n"
    assert (ib / "node_guid").is_file()
    assert not (ib / "ports/1/counters/deeper").exists()
    assert not (ib / "ports/1/gids").exists()
    assert not (tmp_path / "out/sys/class/net/eth0/queue/deep").exists()


def test_mirror_sysfs_resolves_device_link_without_leaving_tree(root: Path, tmp_path: Path) -> None:
    stats = mirror_sysfs(root, tmp_path / "out")
    eth0 = tmp_path / "out/sys/class/net/eth0"
    assert (eth0 / "device/vendor").read_text() == "0x10de\n"
    assert not (tmp_path / "out/sys/class/net/evil").exists()
    assert not any(p.is_symlink() for p in (tmp_path / "out").rglob("*"))
    assert (stats.entries, stats.files) == (4, len(_tree(tmp_path / "out")))


def test_mirror_sysfs_archive_holds_the_same_files_as_the_folder(root: Path, tmp_path: Path) -> None:
    folder_stats = mirror_sysfs(root, tmp_path / "folder")
    archive_stats = _archive(root, tmp_path / "sys.tar.gz")
    with tarfile.open(tmp_path / "sys.tar.gz") as tar:
        members = tar.getmembers()
        tar.extractall(tmp_path / "unpacked", filter="data")
    assert archive_stats == folder_stats
    assert _tree(tmp_path / "unpacked") == _tree(tmp_path / "folder")
    assert {m.mode for m in members if m.isfile()} == {0o644}
    assert {m.mode for m in members if m.isdir()} == {0o755}
    assert all(m.isfile() or m.isdir() for m in members)


def test_mirror_sysfs_of_empty_root_copies_nothing(tmp_path: Path) -> None:
    stats = _archive(tmp_path, tmp_path / "sys.tar.gz")
    with tarfile.open(tmp_path / "sys.tar.gz") as tar:
        assert tar.getmembers() == []
    assert (stats.entries, stats.files) == (0, 0)


def test_mirror_sends_paths_relative_to_root(root: Path) -> None:
    seen: list[str] = []
    mirror(root, lambda rel, _data: seen.append(rel.as_posix()), (SysfsTree("sys/class/net/*", 0),))
    device = ["sys/class/net/eth0/device/" + name for name in ("class", "current_link_width", "vendor")]
    assert seen == ["sys/class/net/eth0/mtu", *device]
