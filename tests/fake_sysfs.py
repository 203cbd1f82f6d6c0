"""A tiny fake node root (/sys and /etc) for the sysfs mirror and `gpurack capture` tests."""

from __future__ import annotations

import os
from pathlib import Path


def make_fake_root(root: Path) -> Path:
    """A tiny /sys and /etc: an NVIDIA GPU, an Intel bridge, a NIC, and a link leaving the tree."""
    devices = root / "sys/devices/pci0000:00"
    attrs = {
        "0000:00:06.0": {"vendor": "0x10de\n", "class": "0x030200\n", "current_link_width": "16\n"},
        "0000:00:01.0": {"vendor": "0x8086\n", "class": "0x060400\n"},
        "0000:00:07.0": {"vendor": "0x144d\n", "class": "0x010802\n"},
    }
    for bus_id, files in attrs.items():
        for name, text in files.items():
            (devices / bus_id).mkdir(parents=True, exist_ok=True)
            (devices / bus_id / name).write_text(text)
        (root / "sys/bus/pci/devices").mkdir(parents=True, exist_ok=True)
        os.symlink(f"../../../devices/pci0000:00/{bus_id}", root / "sys/bus/pci/devices" / bus_id)
    gpu = devices / "0000:00:06.0"
    (gpu / "config").write_bytes(b"\x00\x01")  # binary config space: never copied
    (gpu / "remove").write_text("")
    (gpu / "remove").chmod(0o200)  # write-only attribute
    (gpu / "power").mkdir()
    (gpu / "power" / "runtime_status").write_text("active\n")
    net = root / "sys/devices/virtual/net/eth0"
    net.mkdir(parents=True)
    (net / "mtu").write_text("1500\n")
    (net / "queue").mkdir()
    (net / "queue" / "deep").mkdir()
    (net / "queue" / "deep" / "too_deep").write_text("x\n")
    os.symlink("../../../pci0000:00/0000:00:06.0", net / "device")
    (root / "sys/class/net").mkdir(parents=True)
    os.symlink("../../devices/virtual/net/eth0", root / "sys/class/net/eth0")
    outside = root / "elsewhere"
    outside.mkdir()
    (outside / "secret").write_text("no\n")
    os.symlink(str(outside), root / "sys/class/net/evil")
    (root / "etc").mkdir()
    (root / "etc/os-release").write_text('ID=debian\nVERSION_ID="12"\n')
    return root
