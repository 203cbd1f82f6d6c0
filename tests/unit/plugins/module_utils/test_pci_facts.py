"""pci facts: lspci -vvv of a real 8x H100 HGX, the real H200 capture's sysfs, edited copies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    RC_NOT_FOUND,
    CommandOutput,
    format_capture_file,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci import (
    downgraded_bus_ids,
    gather_pci,
    normalize_bus_id,
    parse_lspci_vvv,
    parse_sysfs_speed,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import (
    CaptureSource,
    LiveSource,
    Runner,
)
from conftest import H200X1, PUBLIC

LSPCI_HGX = PUBLIC / "lspci-vvv.hgx-h100"

# Every LnkSta of the HGX capture that carries a "(downgraded)" marker (12 speed, 4 width).
HGX_DOWNGRADED = [
    "0000:00:0c.0",
    "0000:00:0e.0",
    "0000:01:00.0",
    "0000:01:00.1",
    "0000:17:00.0",
    "0000:17:03.0",
    "0000:39:00.0",
    "0000:4a:00.0",
    "0000:5b:00.0",
    "0000:80:01.0",
    "0000:81:00.1",
    "0000:99:00.0",
    "0000:99:03.0",
    "0000:b9:00.0",
    "0000:c9:00.0",
    "0000:d9:00.0",
]
HGX_GPUS = [f"0000:{b}:00.0" for b in ("19", "3b", "4c", "5d", "9b", "bb", "cb", "db")]
HGX_CX7 = [f"0000:{b}:00.0" for b in ("1a", "3c", "4d", "5e", "9c", "bc", "cc", "dc")]
Hgx = dict[str, dict[str, Any]]
GEN5_X16 = {
    "cap_speed_gts": 32.0,
    "cap_width": 16,
    "sta_speed_gts": 32.0,
    "sta_width": 16,
    "speed_downgraded": False,
    "width_downgraded": False,
}


def _runner(outputs: Mapping[tuple[str, ...], CommandOutput]) -> Runner:
    def run(argv: Sequence[str]) -> CommandOutput:
        return outputs.get(tuple(argv), CommandOutput(rc=RC_NOT_FOUND, stdout=""))

    return run


def _lspci_source(root: Path, text: str) -> LiveSource:
    return LiveSource(_runner({("lspci", "-vvv"): CommandOutput(rc=0, stdout=text)}), root)


@pytest.fixture(scope="module")
def hgx() -> Hgx:
    return {d["bus_id"]: d for d in parse_lspci_vvv(LSPCI_HGX.read_text())}


def test_parse_lspci_vvv_hgx_h100_reports_every_downgraded_link(hgx: Hgx) -> None:
    assert downgraded_bus_ids(list(hgx.values())) == HGX_DOWNGRADED


def test_parse_lspci_vvv_hgx_h100_reads_speed_and_width_markers(hgx: Hgx) -> None:
    # "LnkCap: Port #12, Speed 8GT/s, Width x1" / "LnkSta: Speed 5GT/s (downgraded), Width x1 (ok)"
    assert hgx["0000:00:0c.0"]["link"] == {
        "cap_speed_gts": 8.0,
        "cap_width": 1,
        "sta_speed_gts": 5.0,
        "sta_width": 1,
        "speed_downgraded": True,
        "width_downgraded": False,
    }
    # "LnkSta: Speed 5GT/s (ok), Width x1 (downgraded)" against "Width x2"
    assert hgx["0000:01:00.0"]["link"]["width_downgraded"] is True
    assert hgx["0000:01:00.0"]["link"]["speed_downgraded"] is False


def test_parse_lspci_vvv_hgx_h100_finds_eight_h100_at_gen5_x16(hgx: Hgx) -> None:
    gpus = [
        b
        for b, d in hgx.items()
        if d["description"].startswith("3D controller: NVIDIA Corporation Device 2330")
    ]
    assert gpus == HGX_GPUS
    assert all(hgx[b]["link"] == GEN5_X16 for b in gpus)
    assert [hgx[b]["numa_node"] for b in gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    # plain -vvv prints names, not ids; ids come from sysfs on a live host
    assert hgx["0000:19:00.0"]["vendor_id"] is None


def test_parse_lspci_vvv_hgx_h100_finds_eight_connectx7_at_gen5_x16(hgx: Hgx) -> None:
    cx7 = [b for b, d in hgx.items() if "[ConnectX-7]" in d["description"]]
    assert cx7 == HGX_CX7
    assert all(hgx[b]["link"] == GEN5_X16 for b in cx7)


def test_parse_lspci_vvv_device_without_express_capability_has_null_link(hgx: Hgx) -> None:
    assert hgx["0000:00:00.0"]["link"] is None
    assert hgx["0000:00:00.0"]["description"] == "System peripheral: Intel Corporation Device 09a2 (rev 20)"


def test_parse_lspci_vvv_nn_brackets_give_ids() -> None:
    text = (
        "0000:19:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330] (rev a1)\n"
        "\tNUMA node: 0\n"
        "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n"
        "\t\tLnkSta:\tSpeed 32GT/s, Width x16\n"
    )
    (device,) = parse_lspci_vvv(text)
    assert (device["vendor_id"], device["device_id"], device["class_id"]) == ("0x10de", "0x2330", "0x0302")
    # older pciutils print no (ok)/(downgraded) markers: the numbers are compared instead
    assert device["link"] == GEN5_X16


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("19:00.0", "0000:19:00.0"),
        ("0000:9B:00.0", "0000:9b:00.0"),
        ("00000000:19:00.0", "0000:19:00.0"),
        ("PCI:0000:9b:00", "0000:9b:00.0"),
        ("not-a-bus-id", None),
    ],
)
def test_normalize_bus_id_forms_map_to_sysfs_form(text: str, expected: str | None) -> None:
    assert normalize_bus_id(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("32.0 GT/s PCIe\n", 32.0), ("2.5 GT/s PCIe", 2.5), ("Unknown", None), ("", None), (None, None)],
)
def test_parse_sysfs_speed_values_map_to_float_or_null(text: str | None, expected: float | None) -> None:
    assert parse_sysfs_speed(text) == expected


def test_gather_pci_h200x1_without_lspci_falls_back_to_sysfs() -> None:
    facts = gather_pci(CaptureSource(H200X1))
    assert facts["available"] is True
    assert facts["source"] == "sysfs"
    devices = {d["bus_id"]: d for d in facts["devices"]}
    assert list(devices) == ["0000:00:00.0", "0000:00:06.0"]
    gpu = devices["0000:00:06.0"]
    assert (gpu["vendor_id"], gpu["device_id"], gpu["class_id"]) == ("0x10de", "0x2335", "0x0302")
    assert gpu["link"] == GEN5_X16
    assert gpu["numa_node"] is None  # sysfs numa_node is -1 in this VM
    assert devices["0000:00:00.0"]["link"] is None  # host bridge: empty link attributes
    assert facts["downgraded"] == []


def test_gather_pci_lspci_with_sysfs_fills_ids_and_numa(tmp_path: Path) -> None:
    # A sysfs entry for the first H100 only; values as a live HGX shows them.
    dev = tmp_path / "sys/bus/pci/devices/0000:19:00.0"
    dev.mkdir(parents=True)
    for name, value in {
        "vendor": "0x10de",
        "device": "0x2330",
        "class": "0x030200",
        "numa_node": "0",
    }.items():
        (dev / name).write_text(value + "\n")
    facts = gather_pci(_lspci_source(tmp_path, LSPCI_HGX.read_text()))
    assert facts["source"] == "lspci-vvv"
    assert facts["sources"] == ["lspci -vvv", "sys/bus/pci/devices"]
    gpu = next(d for d in facts["devices"] if d["bus_id"] == "0000:19:00.0")
    assert (gpu["vendor_id"], gpu["device_id"], gpu["class_id"], gpu["numa_node"]) == (
        "0x10de",
        "0x2330",
        "0x0302",
        0,
    )
    assert gpu["description"] == "3D controller: NVIDIA Corporation Device 2330 (rev a1)"
    assert facts["downgraded"] == HGX_DOWNGRADED


def test_gather_pci_gpu_link_downgraded_in_copy_is_reported(tmp_path: Path) -> None:
    head, gpu, tail = LSPCI_HGX.read_text().partition("19:00.0 3D controller")
    # Edit: the first H100 (its LnkSta is the first after its header) trained at Gen4 x8.
    edited = tail.replace(
        "LnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)",
        "LnkSta:\tSpeed 16GT/s (downgraded), Width x8 (downgraded)",
        1,
    )
    assert edited != tail
    capture = tmp_path / "capture"
    capture.mkdir()
    (capture / "lspci-vvv.txt").write_text(
        format_capture_file("lspci -vvv", CommandOutput(rc=0, stdout=head + gpu + edited))
    )
    facts = gather_pci(CaptureSource(capture))
    assert "0000:19:00.0" in facts["downgraded"]
    gpu_dev = next(d for d in facts["devices"] if d["bus_id"] == "0000:19:00.0")
    assert gpu_dev["link"]["sta_speed_gts"] == 16.0
    assert gpu_dev["link"]["sta_width"] == 8
    assert gpu_dev["link"]["speed_downgraded"] and gpu_dev["link"]["width_downgraded"]


def test_parse_lspci_vvv_lnksta_without_speed_raises(tmp_path: Path) -> None:
    copy = tmp_path / "lspci-vvv"
    # Edit: drop "Speed 32GT/s (ok), " from the first H100's LnkSta line.
    text = LSPCI_HGX.read_text()
    head, gpu, tail = text.partition("19:00.0 3D controller")
    copy.write_text(head + gpu + tail.replace("LnkSta:\tSpeed 32GT/s (ok), Width", "LnkSta:\tWidth", 1))
    with pytest.raises(FactsError, match=r"lspci -vvv: 0000:19:00\.0 LnkSta line has no Speed"):
        parse_lspci_vvv(copy.read_text())


def test_parse_lspci_vvv_truncated_after_lnkcap_raises(tmp_path: Path) -> None:
    copy = tmp_path / "lspci-vvv"
    # Edit: cut the output right after the first H100's LnkCap line.
    text = LSPCI_HGX.read_text()
    start = text.index("19:00.0 3D controller")
    cut = text.index("\n", text.index("LnkCap:", start)) + 1
    copy.write_text(text[:cut])
    with pytest.raises(FactsError, match=r"0000:19:00\.0 has LnkCap but no LnkSta"):
        parse_lspci_vvv(copy.read_text())


def test_parse_lspci_vvv_garbage_header_raises() -> None:
    with pytest.raises(FactsError, match="line 1 is not a device header"):
        parse_lspci_vvv("Segmentation fault\n")


def test_gather_pci_without_lspci_or_sysfs_is_unavailable(tmp_path: Path) -> None:
    facts = gather_pci(LiveSource(_runner({}), tmp_path))
    assert facts["available"] is False
    assert "lspci is not installed" in facts["reason"]
    assert facts["devices"] == []
