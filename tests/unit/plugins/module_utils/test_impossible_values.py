"""Impossible values are refused by every parser with FactsError (docs/facts.md, "Impossible values").

Each input is a real capture (shared/fixtures) with one value edited to something no hardware
reports; before issue 13 every one of them parsed and reached the checks as a fact.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu import gather_gpu
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_pci_scan import scan_pci_gpus
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi import (
    parse_nvidia_smi_xml,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi_text import (
    parse_nvidia_smi_text,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci import (
    gather_pci,
    parse_lspci_vvv,
    parse_sysfs_pci_device,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureSource

from .gpu_facts_inputs import H100X8, capture_text, writable_capture

GPU_SYSFS = "sys/bus/pci/devices/0000:00:06.0"


def _edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# (old, new, words the error must contain) on the H200's `nvidia-smi -q -x`.
XML_EDITS = [
    pytest.param(
        "<current_link_gen>5</current_link_gen>",
        "<current_link_gen>9</current_link_gen>",
        ("current PCIe generation is 9", "1 to 6"),
        id="current-gen-9",
    ),
    pytest.param(
        "<max_link_gen>5</max_link_gen>",
        "<max_link_gen>4</max_link_gen>",
        ("current PCIe generation is 5, above its maximum 4",),
        id="current-gen-above-max",
    ),
    pytest.param(
        "<max_device_link_gen>5</max_device_link_gen>",
        "<max_device_link_gen>7</max_device_link_gen>",
        ("device max PCIe generation is 7",),
        id="device-gen-7",
    ),
    pytest.param(
        "<current_link_width>16x</current_link_width>",
        "<current_link_width>3x</current_link_width>",
        ("current link width is 3", "x1/x2/x4/x8/x16/x32"),
        id="width-x3",
    ),
    pytest.param(
        "<max_link_width>16x</max_link_width>",
        "<max_link_width>64x</max_link_width>",
        ("max link width is 64",),
        id="width-x64",
    ),
    pytest.param(
        "<max_link_width>16x</max_link_width>",
        "<max_link_width>8x</max_link_width>",
        ("current link width is 16, above its maximum 8",),
        id="width-above-max",
    ),
    pytest.param(
        "<total>143771 MiB</total>",
        "<total>-1 MiB</total>",
        ("FB memory total is -1",),
        id="memory-negative",
    ),
    pytest.param(
        "<total>143771 MiB</total>",
        f"<total>{10**23} MiB</total>",
        (f"FB memory total is {10**23}", "16777216 MiB"),
        id="memory-1e23",
    ),
    pytest.param(
        "<replay_counter>0</replay_counter>",
        "<replay_counter>-5</replay_counter>",
        ("PCIe replays since reset is -5",),
        id="replays-negative",
    ),
    pytest.param(
        "<attached_gpus>1</attached_gpus>",
        "<attached_gpus>-1</attached_gpus>",
        ("Attached GPUs is -1",),
        id="attached-negative",
    ),
]


@pytest.mark.parametrize(("old", "new", "words"), XML_EDITS)
def test_xml_impossible_value_raises_naming_it(
    h200x1: Path, old: str, new: str, words: tuple[str, ...]
) -> None:
    text = _edit(capture_text(h200x1, "nvidia-smi-q.xml"), old, new)
    with pytest.raises(FactsError) as caught:
        parse_nvidia_smi_xml(text)
    for word in words:
        assert word in str(caught.value)
    assert str(caught.value).startswith("nvidia-smi -q -x: ")


def test_xml_negative_ecc_counter_raises(h200x1: Path) -> None:
    text = capture_text(h200x1, "nvidia-smi-q.xml")
    counter = re.search(r"<sram_correctable>0</sram_correctable>", text)
    assert counter is not None
    with pytest.raises(FactsError, match="ECC counter corrected is -3"):
        parse_nvidia_smi_xml(_edit(text, counter.group(0), "<sram_correctable>-3</sram_correctable>"))


def test_text_current_gen_above_max_raises(public: Path) -> None:
    # The first GPU section of the 8x H100 paste: Max 5, then Current 5 -> Current 9.
    text = (public / H100X8).read_text()
    edited = re.sub(r"(PCIe Generation\n\s+Max\s+: 5\n\s+Current\s+: )5", r"\g<1>9", text, count=1)
    assert edited != text
    with pytest.raises(
        FactsError, match=r"nvidia-smi -q: GPU 00000000:19:00.0: current PCIe generation is 9"
    ):
        parse_nvidia_smi_text(edited)


def test_the_real_captures_hold_no_impossible_value(h200x1: Path, public: Path) -> None:
    assert parse_nvidia_smi_xml(capture_text(h200x1, "nvidia-smi-q.xml"))["count"] == 1
    assert parse_nvidia_smi_text((public / H100X8).read_text())["count"] == 8
    assert len(parse_lspci_vvv((public / "lspci-vvv.hgx-h100").read_text())) > 100


def test_gather_gpu_refuses_the_capture_and_names_the_node(h200x1: Path, tmp_path: Path) -> None:
    root = writable_capture(h200x1, tmp_path)
    xml = root / "nvidia-smi-q.xml"
    xml.write_text(
        _edit(
            xml.read_text(),
            "<current_link_gen>5</current_link_gen>",
            "<current_link_gen>9</current_link_gen>",
        )
    )
    with pytest.raises(FactsError, match=r"current PCIe generation is 9") as caught:
        gather_gpu(CaptureSource(root))
    assert str(root) in str(caught.value) or root.name in str(caught.value)


# --- lspci -vvv and sysfs ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "LnkCap:\tPort #1, Speed 32GT/s, Width x16",
            "LnkCap:\tPort #1, Speed 32GT/s, Width x3",
            "LnkCap width is 3",
        ),
        ("LnkCap:\tPort #1, Speed 32GT/s", "LnkCap:\tPort #1, Speed 40GT/s", "LnkCap speed is 40.0"),
        (
            "LnkSta:\tSpeed 32GT/s (ok), Width x16",
            "LnkSta:\tSpeed 32GT/s (ok), Width x48",
            "LnkSta width is 48",
        ),
    ],
)
def test_lspci_impossible_link_raises(public: Path, old: str, new: str, message: str) -> None:
    text = (public / "lspci-vvv.hgx-h100").read_text()
    with pytest.raises(FactsError, match=message):
        parse_lspci_vvv(_edit(text, old, new))


def test_lspci_link_down_x0_is_a_real_reading(public: Path) -> None:
    """An empty root port trains no link: lspci prints LnkSta Width x0, which is accepted."""
    text = (public / "lspci-vvv.hgx-h100").read_text()
    edited = _edit(
        text, "LnkSta:\tSpeed 32GT/s (ok), Width x16", "LnkSta:\tSpeed 2.5GT/s (downgraded), Width x0"
    )
    assert any(d["link"] and d["link"]["sta_width"] == 0 for d in parse_lspci_vvv(edited))


@pytest.mark.parametrize(
    ("attr", "value", "message"),
    [
        ("current_link_width", "3", "current_link_width: width is 3"),
        ("max_link_width", "-16", "max_link_width: width is -16"),
        ("max_link_speed", "40.0 GT/s PCIe", "max_link_speed: link speed is 40.0"),
    ],
)
def test_sysfs_impossible_link_raises(
    h200x1: Path, tmp_path: Path, attr: str, value: str, message: str
) -> None:
    root = writable_capture(h200x1, tmp_path)
    (root / GPU_SYSFS / attr).write_text(value + "\n")
    source = CaptureSource(root)
    with pytest.raises(FactsError, match=message):
        gather_pci(source)
    with pytest.raises(FactsError, match=attr):
        scan_pci_gpus(source)


def test_sysfs_gpu_scan_refuses_current_gen_above_max(h200x1: Path, tmp_path: Path) -> None:
    root = writable_capture(h200x1, tmp_path)
    (root / GPU_SYSFS / "max_link_speed").write_text("16.0 GT/s PCIe\n")
    with pytest.raises(FactsError, match="current PCIe generation is 5, above its maximum 4"):
        scan_pci_gpus(CaptureSource(root))


def test_sysfs_link_down_width_0_is_a_real_reading() -> None:
    device = parse_sysfs_pci_device(
        "0000:00:01.0",
        {"current_link_width": "0", "max_link_width": "16", "current_link_speed": "Unknown"},
    )
    assert device["link"]["sta_width"] == 0 and device["link"]["width_downgraded"] is True


@pytest.mark.parametrize("speed", ["1.2.3GT/s", "9999999999999999999999GT/s"])
def test_lspci_malformed_speed_is_a_facts_error(public: Path, speed: str) -> None:
    text = (public / "lspci-vvv.hgx-h100").read_text()
    with pytest.raises(FactsError):
        parse_lspci_vvv(_edit(text, "LnkCap:\tPort #1, Speed 32GT/s", f"LnkCap:\tPort #1, Speed {speed}"))
