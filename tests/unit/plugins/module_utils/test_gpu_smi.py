"""nvidia-smi -q -x and -q text parsing over the real captures, and its refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi import (
    parse_nvidia_smi_xml,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi_text import (
    parse_nvidia_smi_text,
)

from .gpu_facts_inputs import (
    H100X8,
    H200_UUID,
    RTX4090X8,
    capture_text,
)

# --- nvidia-smi -q -x and -q text: the real H200 capture -----------------------------------


def test_parse_nvidia_smi_xml_h200x1_reads_every_field(h200x1: Path) -> None:
    facts = parse_nvidia_smi_xml(capture_text(h200x1, "nvidia-smi-q.xml"))
    assert (facts["driver_version"], facts["cuda_version"], facts["count"]) == ("580.159.04", "13.0", 1)
    assert facts["nvswitch"] is False
    gpu = facts["gpus"][0]
    assert gpu["index"] == 0
    assert gpu["name"] == "NVIDIA H200"
    assert gpu["architecture"] == "Hopper"
    assert gpu["uuid"] == H200_UUID
    assert gpu["serial"] == "1654924064277"
    assert gpu["bus_id"] == "0000:00:06.0"
    assert gpu["pci_device_id"] == "0x2335"
    assert gpu["vbios"] == "96.00.A5.00.1E"
    assert gpu["memory_total_mib"] == 143771
    assert gpu["pcie"] == {
        "gen_current": 5,
        "gen_max": 5,
        "gen_max_device": 5,
        "gen_max_host": None,  # N/A in this KVM guest
        "width_current": 16,
        "width_max": 16,
    }
    assert (gpu["persistence_mode"], gpu["mig_mode"], gpu["ecc_mode"]) == (True, False, True)
    assert gpu["ecc_errors"] == {
        "volatile_corrected": 0,
        "volatile_uncorrected": 0,
        "aggregate_corrected": 0,
        "aggregate_uncorrected": 0,
    }
    assert gpu["remapped_rows"] == {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False}
    assert gpu["retired_pages"] == {"single_bit": None, "double_bit": None, "pending": None}
    assert gpu["recovery_action"] == "None"
    assert gpu["clocks_event_reasons"] == ["idle"]


def test_parse_nvidia_smi_text_h200x1_matches_xml(h200x1: Path) -> None:
    text = parse_nvidia_smi_text(capture_text(h200x1, "nvidia-smi-q.txt"))
    xml = parse_nvidia_smi_xml(capture_text(h200x1, "nvidia-smi-q.xml"))
    assert text["gpus"][0]["memory_total_mib"] == 143771
    assert text["gpus"][0]["remapped_rows"]["pending"] is False
    assert text == xml


# --- nvidia-smi -q text: public 8-GPU captures --------------------------------------------


def test_parse_nvidia_smi_text_h100x8_reads_eight_gpus(public: Path) -> None:
    facts = parse_nvidia_smi_text((public / H100X8).read_text())
    assert (facts["driver_version"], facts["cuda_version"], facts["count"]) == ("535.161.08", "12.2", 8)
    # Fabric State "Completed": the GPUs are registered with fabric manager (NVSwitch).
    assert facts["nvswitch"] is True
    assert {gpu["name"] for gpu in facts["gpus"]} == {"NVIDIA H100 80GB HBM3"}
    assert [gpu["bus_id"] for gpu in facts["gpus"]] == [
        "0000:19:00.0",
        "0000:3b:00.0",
        "0000:4c:00.0",
        "0000:5d:00.0",
        "0000:9b:00.0",
        "0000:bb:00.0",
        "0000:cb:00.0",
        "0000:db:00.0",
    ]
    first = facts["gpus"][0]
    assert first["uuid"] == "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa"
    assert first["serial"] == "1650124031592"
    assert first["pci_device_id"] == "0x2330"
    assert first["vbios"] == "96.00.74.00.0D"
    assert all(gpu["memory_total_mib"] == 81559 for gpu in facts["gpus"])
    assert all(
        gpu["pcie"]
        == {
            "gen_current": 5,
            "gen_max": 5,
            "gen_max_device": 5,
            "gen_max_host": 5,
            "width_current": 16,
            "width_max": 16,
        }
        for gpu in facts["gpus"]
    )
    assert first["ecc_mode"] is True
    assert first["ecc_errors"]["aggregate_uncorrected"] == 0
    assert first["remapped_rows"] == {
        "correctable": 0,
        "uncorrectable": 0,
        "pending": False,
        "failure": False,
    }
    # 535 prints "GPU Reset Status", not "GPU Recovery Action" (added in 550).
    assert first["recovery_action"] is None
    assert first["clocks_event_reasons"] == ["hw_slowdown", "hw_power_brake_slowdown"]


def test_parse_nvidia_smi_text_rtx4090x8_gives_null_for_na(public: Path) -> None:
    facts = parse_nvidia_smi_text((public / RTX4090X8).read_text())
    assert facts["count"] == 8
    assert facts["nvswitch"] is False
    assert {gpu["name"] for gpu in facts["gpus"]} == {"NVIDIA GeForce RTX 4090"}
    first = facts["gpus"][0]
    assert first["architecture"] == "Ada Lovelace"
    assert first["mig_mode"] is None  # MIG Mode Current: N/A
    assert first["serial"] is None  # Serial Number: N/A
    assert first["ecc_mode"] is False
    assert set(first["ecc_errors"].values()) == {None}  # every ECC counter N/A
    assert first["memory_total_mib"] == 24564
    assert first["pcie"] == {
        "gen_current": 4,
        "gen_max": 4,
        "gen_max_device": 4,
        "gen_max_host": 4,
        "width_current": 16,
        "width_max": 16,
    }


def test_parse_nvidia_smi_text_truncated_raises_with_both_counts(public: Path) -> None:
    text = (public / H100X8).read_text()
    # Edit: cut the paste just before the 8th GPU section (bus 0000:db:00.0).
    truncated = text[: text.index("GPU 00000000:DB:00.0")]
    with pytest.raises(FactsError, match=r"nvidia-smi -q: 'Attached GPUs: 8' but 7 GPU sections"):
        parse_nvidia_smi_text(truncated)


def test_parse_nvidia_smi_text_section_without_product_name_raises(h200x1: Path) -> None:
    # Edit: drop the Product Name line of the only GPU section.
    text = "".join(
        line
        for line in capture_text(h200x1, "nvidia-smi-q.txt").splitlines(keepends=True)
        if "Product Name" not in line
    )
    with pytest.raises(FactsError, match=r"nvidia-smi -q: GPU 00000000:00:06.0 has no Product Name"):
        parse_nvidia_smi_text(text)


def test_parse_nvidia_smi_text_cut_mid_section_raises(h200x1: Path) -> None:
    text = capture_text(h200x1, "nvidia-smi-q.txt")
    # Edit: cut the paste in the middle of the GPU section, before "FB Memory Usage".
    with pytest.raises(FactsError, match="no FB Memory Usage total"):
        parse_nvidia_smi_text(text[: text.index("    FB Memory Usage")])


def test_parse_nvidia_smi_text_unrelated_text_raises() -> None:
    with pytest.raises(FactsError, match="not nvidia-smi -q output"):
        parse_nvidia_smi_text("No devices were found\n")


def test_parse_nvidia_smi_xml_broken_raises(h200x1: Path) -> None:
    xml = capture_text(h200x1, "nvidia-smi-q.xml")
    # Edit: keep only the first half of the XML document (closing tags lost).
    with pytest.raises(FactsError, match=r"nvidia-smi -q -x: XML does not parse"):
        parse_nvidia_smi_xml(xml[: len(xml) // 2])


def test_parse_nvidia_smi_xml_attached_mismatch_raises(h200x1: Path) -> None:
    # Edit: claim two attached GPUs while the document holds one <gpu>.
    xml = capture_text(h200x1, "nvidia-smi-q.xml").replace(
        "<attached_gpus>1</attached_gpus>", "<attached_gpus>2</attached_gpus>"
    )
    with pytest.raises(FactsError, match=r"'Attached GPUs: 2' but 1 GPU sections"):
        parse_nvidia_smi_xml(xml)


def test_parse_nvidia_smi_xml_other_document_raises() -> None:
    with pytest.raises(FactsError, match="expected <nvidia_smi_log>"):
        parse_nvidia_smi_xml("<html><body/></html>")
