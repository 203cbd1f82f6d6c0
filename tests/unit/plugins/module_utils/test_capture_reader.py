"""The capture reader: a bundle is data, never a path into the host (links, sizes, bytes)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import capture_reader as _capture_reader
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture_reader import (
    MAX_FILE_BYTES,
    CaptureReader,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu import gather_gpu
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nic import gather_nic
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import (
    CaptureError,
    CaptureSource,
    is_capture_dir,
)

SECRET = "TOPSECRET root:$6$hash"


@pytest.fixture
def bundle(h200x1: Path, writable_capture: Callable[[Path, str], Path]) -> Path:
    """A writable copy of the real 1x H200 capture."""
    return writable_capture(h200x1, "bundle")


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "shadow"
    path.write_text(SECRET + "\nsecond line\n")
    return path


def _replace_with_link(path: Path, target: Path | str) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)


@pytest.mark.parametrize("name", ["nvidia-smi-q.xml", "uname.txt", "os-release", "capture.json"])
def test_read_file_link_out_of_the_bundle_is_refused_by_name_without_content(
    bundle: Path, secret: Path, name: str
) -> None:
    _replace_with_link(bundle / name, secret)
    with pytest.raises(CaptureError, match=f"{name}: is a link that leaves the capture bundle") as caught:
        CaptureReader(bundle).read(name)
    assert "TOPSECRET" not in str(caught.value)
    assert str(secret) not in str(caught.value)


def test_read_relative_link_climbing_out_is_refused(bundle: Path, secret: Path) -> None:
    _replace_with_link(bundle / "nvidia-smi-q.xml", Path("..") / secret.name)
    with pytest.raises(CaptureError, match="leaves the capture bundle"):
        CaptureSource(bundle).run(["nvidia-smi", "-q", "-x"])


def test_read_dangling_link_out_of_the_bundle_is_refused_not_absent(bundle: Path) -> None:
    _replace_with_link(bundle / "nvidia-smi-q.xml", "/nonexistent/gpurack-test")
    with pytest.raises(CaptureError, match="leaves the capture bundle"):
        CaptureReader(bundle).read("nvidia-smi-q.xml")


def test_sys_folder_linked_to_the_host_sys_is_refused(bundle: Path) -> None:
    _replace_with_link(bundle / "sys", "/sys")
    with pytest.raises(CaptureError, match="sys/class/net: is a link that leaves"):
        gather_nic(CaptureSource(bundle))


def test_sys_subfolder_link_out_is_refused_even_for_a_file_absent_there(bundle: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    _replace_with_link(bundle / "sys/class/net", outside)
    with pytest.raises(CaptureError, match="sys/class/net/eth0/mtu: is a link that leaves"):
        CaptureReader(bundle).read("sys/class/net/eth0/mtu")


def test_listdir_refuses_an_entry_that_links_out(bundle: Path, tmp_path: Path) -> None:
    outside = tmp_path / "node9"
    outside.mkdir()
    (bundle / "sys/devices/system/node/node9").symlink_to(outside)
    with pytest.raises(CaptureError, match="node9: is a link that leaves"):
        CaptureReader(bundle).listdir("sys/devices/system/node")


def test_link_inside_the_bundle_is_followed(bundle: Path, h200x1: Path) -> None:
    (bundle / "kept").mkdir()
    shutil.move(bundle / "nvidia-smi-q.xml", bundle / "kept/nvidia-smi-q.xml")
    (bundle / "nvidia-smi-q.xml").symlink_to("kept/nvidia-smi-q.xml")
    assert gather_gpu(CaptureSource(bundle)) == gather_gpu(CaptureSource(h200x1))


def test_link_loop_is_refused(bundle: Path) -> None:
    _replace_with_link(bundle / "nvidia-smi-q.xml", "nvidia-smi-q.xml")
    with pytest.raises(CaptureError, match=r"nvidia-smi-q\.xml: is a link loop"):
        CaptureReader(bundle).read("nvidia-smi-q.xml")


def test_fifo_in_a_file_place_is_refused_without_blocking(bundle: Path) -> None:
    (bundle / "nvidia-smi-q.xml").unlink()
    os.mkfifo(bundle / "nvidia-smi-q.xml")
    with pytest.raises(CaptureError, match=r"nvidia-smi-q\.xml: is not a regular file"):
        CaptureReader(bundle).read("nvidia-smi-q.xml")


def test_folder_in_a_file_place_is_refused(bundle: Path) -> None:
    (bundle / "nvidia-smi-q.xml").unlink()
    (bundle / "nvidia-smi-q.xml").mkdir()
    with pytest.raises(CaptureError, match=r"nvidia-smi-q\.xml: is a folder where a file was expected"):
        CaptureSource(bundle).run(["nvidia-smi", "-q", "-x"])


def test_oversize_file_is_refused_from_its_size_before_any_read(
    bundle: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (bundle / "lspci-vvv.txt").open("r+b") as handle:
        handle.truncate(100_000_000)  # sparse: 100 MB without writing them

    def no_read(fd: int, size: int) -> bytes:
        raise AssertionError("an oversize file must not be read")

    monkeypatch.setattr(_capture_reader.os, "read", no_read)
    with pytest.raises(CaptureError, match=r"lspci-vvv.txt: 100000000 bytes is over the 16 MiB"):
        CaptureReader(bundle).read("lspci-vvv.txt")


def test_file_at_the_cap_is_read(bundle: Path) -> None:
    path = bundle / "lsmod.txt"
    path.write_bytes(b"x" * MAX_FILE_BYTES)
    text = CaptureReader(bundle).read("lsmod.txt")
    assert text is not None
    assert len(text) == MAX_FILE_BYTES


def test_cap_is_well_above_every_real_capture_file(h200x1: Path, public: Path) -> None:
    largest = max(p.stat().st_size for root in (h200x1, public) for p in root.rglob("*") if p.is_file())
    assert largest * 10 < MAX_FILE_BYTES


def test_undecodable_bytes_are_replaced_and_the_file_named(bundle: Path) -> None:
    path = bundle / "nvidia-smi-q.xml"
    path.write_bytes(path.read_bytes().replace(b"NVIDIA H200", b"NVIDIA H\xff\xfe200", 1))
    source = CaptureSource(bundle)
    gpu = gather_gpu(source)
    assert gpu["count"] == 1
    assert len(source.warnings) == 1
    assert "nvidia-smi-q.xml: 2 undecodable byte sequence(s) replaced by U+FFFD" in source.warnings[0]


def test_clean_capture_has_no_warnings(h200x1: Path) -> None:
    source = CaptureSource(h200x1)
    gather_gpu(source)
    gather_nic(source)
    assert source.warnings == ()


def test_missing_file_reads_as_absent(bundle: Path) -> None:
    (bundle / "ibstat.txt").unlink()
    reader = CaptureReader(bundle)
    assert reader.read("ibstat.txt") is None
    assert reader.listdir("sys/class/nothing-here") == []


def test_a_link_still_marks_a_capture_folder_so_it_is_refused_by_name(tmp_path: Path, secret: Path) -> None:
    (tmp_path / "only").mkdir()
    (tmp_path / "only/nvidia-smi-q.xml").symlink_to(secret)
    assert is_capture_dir(tmp_path / "only")
