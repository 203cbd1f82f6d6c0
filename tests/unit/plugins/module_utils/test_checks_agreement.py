"""Silent wrong results of issue 13, each on an edited copy of the real H200 capture:

- nvidia-smi lists fewer GPUs than the PCI bus shows (gpu.pci_visible fails, both numbers);
- a GPU whose host slot allows a lower PCIe generation than the GPU (gpu.pcie.slot warns);
- a GPU's MIG mode against its pool's sharing (gpu.mig_mode);
- a run with only warnings has the verdict warn, never pass.

Before issue 13 each of these passed. The pool and expectations are the example
inventory's h200-inference pool, which matches the unedited capture.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi_text import (
    parse_nvidia_smi_text,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.node import gather_all
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureSource
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import (
    Verdict,
    node_verdict,
    run_verdict,
)
from conftest import REPO

from .check_builders import by_id, run_checks
from .gpu_facts_inputs import H100X8, RTX4090X8, writable_capture

POOL_DIR = REPO / "inventory/example/group_vars/h200_inference"
EXAMPLE_EXPECT: dict[str, Any] = yaml.safe_load((POOL_DIR / "expect.yml").read_text())["gpurack_expect"]
EXAMPLE_POOL: dict[str, Any] = yaml.safe_load((POOL_DIR / "pool.yml").read_text())["gpurack_pool"]
GPU = "0000:00:06.0"
SECOND = "0000:00:07.0"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1))


def _check(root: Path, pool: dict[str, Any] | None = None, expect: Any = None) -> list[dict[str, Any]]:
    facts = gather_all(CaptureSource(root))
    return run_checks(facts, EXAMPLE_EXPECT if expect is None else expect, "quick", pool or EXAMPLE_POOL)


@pytest.fixture
def capture(h200x1: Path, tmp_path: Path) -> Path:
    return writable_capture(h200x1, tmp_path)


def test_the_unedited_capture_passes_the_example_pool(h200x1: Path) -> None:
    results = _check(h200x1)
    assert node_verdict(results) is Verdict.PASS
    assert [r["verdict"] for r in by_id(results, "gpu.pci_visible")] == ["pass"]
    assert by_id(results, "gpu.pci_visible")[0]["measured"] == {"nvidia_smi": 1, "pci": 1}
    assert [r["verdict"] for r in by_id(results, "gpu.mig_mode")] == ["pass"]
    # The KVM guest's driver prints max_host_link_gen N/A: no slot finding.
    assert [r["verdict"] for r in by_id(results, "gpu.pcie.slot")] == ["skip"]


# --- nvidia-smi against the PCI bus ------------------------------------------------------------


def test_nvidia_smi_listing_no_gpu_fails_the_example_pool_with_both_numbers(capture: Path) -> None:
    xml = capture / "nvidia-smi-q.xml"
    text = re.sub(r"<gpu id=.*?</gpu>\s*", "", xml.read_text(), flags=re.DOTALL)
    xml.write_text(text.replace("<attached_gpus>1</attached_gpus>", "<attached_gpus>0</attached_gpus>"))
    results = _check(capture)
    assert node_verdict(results) is Verdict.FAIL
    [visible] = by_id(results, "gpu.pci_visible")
    assert visible["verdict"] == "fail"
    assert visible["measured"] == {"nvidia_smi": 0, "pci": 1}
    assert "nvidia-smi lists 0 GPU(s), the PCI bus shows 1" in visible["reason"]
    assert f"not listed by nvidia-smi: {GPU}" in visible["reason"]
    assert "dmesg" in visible["remediation"]


def test_a_second_gpu_on_pci_that_nvidia_smi_does_not_list_fails_naming_it(capture: Path) -> None:
    devices = capture / "sys/bus/pci/devices"
    shutil.copytree(devices / GPU, devices / SECOND)
    results = _check(capture)
    assert [r["verdict"] for r in by_id(results, "gpu.count")] == ["pass"]  # 1 listed, 1 expected
    [visible] = by_id(results, "gpu.pci_visible")
    assert visible["verdict"] == "fail"
    assert visible["measured"] == {"nvidia_smi": 1, "pci": 2}
    assert (
        visible["reason"]
        == f"nvidia-smi lists 1 GPU(s), the PCI bus shows 2; not listed by nvidia-smi: {SECOND}"
    )
    assert f"PCI {SECOND}: not listed by nvidia-smi" in visible["evidence"]["lines"]
    assert node_verdict(results) is Verdict.FAIL


def test_without_nvidia_smi_the_pci_scan_is_the_count(capture: Path) -> None:
    """Before the driver is installed (preflight runs before prepare) there is nothing to compare."""
    for name in ("nvidia-smi-q.xml", "nvidia-smi-q.txt"):
        (capture / name).write_text("# $ nvidia-smi -q\nsh: 1: nvidia-smi: not found\n# rc=127\n")
    results = _check(capture)
    assert [r["verdict"] for r in by_id(results, "gpu.pci_visible")] == ["skip"]
    assert [r["verdict"] for r in by_id(results, "gpu.count")] == ["pass"]


# --- PCIe generation of the GPU against its host slot ------------------------------------------


def _gen5_gpu_in_gen4_slot(root: Path) -> None:
    xml = root / "nvidia-smi-q.xml"
    _edit(xml, "<max_host_link_gen>N/A</max_host_link_gen>", "<max_host_link_gen>4</max_host_link_gen>")
    _edit(xml, "<max_link_gen>5</max_link_gen>", "<max_link_gen>4</max_link_gen>")
    _edit(xml, "<current_link_gen>5</current_link_gen>", "<current_link_gen>4</current_link_gen>")


def test_a_gen5_gpu_in_a_gen4_slot_warns_showing_both(capture: Path) -> None:
    _gen5_gpu_in_gen4_slot(capture)
    results = _check(capture)
    [slot] = by_id(results, "gpu.pcie.slot")
    assert slot["verdict"] == "warn"
    assert slot["measured"] == {"device_gen": 5, "host_gen": 4}
    assert slot["reason"] == f"GPU 0 ({GPU}) can run PCIe Gen5, its host slot allows Gen4"
    assert "slot" in slot["remediation"]
    # The link itself runs at its (slot-limited) maximum, so the older check saw nothing.
    assert [r["verdict"] for r in by_id(results, "gpu.pcie.current_vs_max")] == ["pass"]


def test_text_output_reads_device_and_host_max(public: Path) -> None:
    text = (public / H100X8).read_text()
    edited = re.sub(
        r"(PCIe Generation\n\s+Max\s+: )5(\n\s+Current\s+: )5((?:\n.*){2}\n\s+Host Max\s+: )5",
        r"\g<1>4\g<2>4\g<3>4",
        text,
        count=1,
    )
    assert edited != text
    facts = {"gpurack_gpu": {"available": True, "source": "nvidia-smi-text", **parse_nvidia_smi_text(edited)}}
    slots = by_id(run_checks(facts, {}), "gpu.pcie.slot")
    assert [r["verdict"] for r in slots] == ["warn"] + ["pass"] * 7
    assert slots[0]["measured"] == {"device_gen": 5, "host_gen": 4}


def test_absent_device_and_host_elements_are_no_finding(capture: Path) -> None:
    """Drivers before R5xx print only max_link_gen."""
    xml = capture / "nvidia-smi-q.xml"
    text = re.sub(r"\s*<max_(?:device|host)_link_gen>.*?</max_(?:device|host)_link_gen>", "", xml.read_text())
    xml.write_text(text)
    results = _check(capture)
    assert [r["verdict"] for r in by_id(results, "gpu.pcie.slot")] == ["skip"]
    assert node_verdict(results) is Verdict.PASS


# --- MIG mode against the pool's sharing ---------------------------------------------------------


def _mig(root: Path, current: str, pending: str) -> None:
    xml = root / "nvidia-smi-q.xml"
    _edit(xml, "<current_mig>Disabled</current_mig>", f"<current_mig>{current}</current_mig>")
    _edit(xml, "<pending_mig>Disabled</pending_mig>", f"<pending_mig>{pending}</pending_mig>")


def test_mig_enabled_in_a_full_gpu_pool_fails_with_remedy(capture: Path) -> None:
    _mig(capture, "Enabled", "Enabled")
    results = _check(capture)
    [mig] = by_id(results, "gpu.mig_mode")
    assert mig["verdict"] == "fail"
    assert mig["reason"] == f"GPU 0 ({GPU}) has MIG enabled, but h200-inference shares GPUs as full-gpu"
    assert "nvidia-smi -i 0 -mig 0" in mig["remediation"] and "mig pool" in mig["remediation"]
    assert mig["measured"] == {"current": True, "pending": True}
    assert node_verdict(results) is Verdict.FAIL


def test_mig_disabled_in_a_mig_pool_fails_with_remedy(h200x1: Path) -> None:
    results = _check(h200x1, pool={**EXAMPLE_POOL, "sharing": "mig"})
    [mig] = by_id(results, "gpu.mig_mode")
    assert mig["verdict"] == "fail"
    assert "has MIG disabled, but h200-inference shares GPUs as mig" in mig["reason"]
    assert "nvidia-smi -i 0 -mig 1" in mig["remediation"]


def test_mig_pending_against_the_pool_warns(capture: Path) -> None:
    _mig(capture, "Disabled", "Enabled")
    [mig] = by_id(_check(capture), "gpu.mig_mode")
    assert mig["verdict"] == "warn"
    assert "MIG becomes enabled at the next GPU reset" in mig["reason"]


def test_a_gpu_without_mig_fails_a_mig_pool_and_passes_a_full_gpu_one(public: Path) -> None:
    parsed = parse_nvidia_smi_text((public / RTX4090X8).read_text())  # MIG Mode Current: N/A
    facts = {"gpurack_gpu": {"available": True, "source": "nvidia-smi-text", **parsed}}
    in_mig = by_id(run_checks(facts, {}, "quick", {"name": "p", "sharing": "mig"}), "gpu.mig_mode")
    assert {r["verdict"] for r in in_mig} == {"fail"} and len(in_mig) == 8
    assert "has no MIG" in in_mig[0]["remediation"]
    full = by_id(run_checks(facts, {}, "quick", {"name": "p", "sharing": "full-gpu"}), "gpu.mig_mode")
    assert {r["verdict"] for r in full} == {"pass"}


@pytest.mark.parametrize(
    ("pool", "reason"),
    [
        (None, "gpurack_pool.sharing is not set"),
        ({"name": "p", "sharing": "time-slicing"}, "asks for no MIG mode"),
    ],
)
def test_mig_mode_is_not_checked_without_a_sharing_that_sets_it(
    h200x1: Path, pool: dict[str, Any] | None, reason: str
) -> None:
    facts = gather_all(CaptureSource(h200x1))
    [mig] = by_id(run_checks(facts, EXAMPLE_EXPECT, "quick", pool), "gpu.mig_mode")
    assert mig["verdict"] == "skip" and reason in mig["reason"]


# --- a run with warnings --------------------------------------------------------------------------


def test_every_new_warning_makes_the_node_and_the_run_warn(h200x1: Path, tmp_path: Path) -> None:
    slot = writable_capture(h200x1, tmp_path / "slot")
    _gen5_gpu_in_gen4_slot(slot)
    pending = writable_capture(h200x1, tmp_path / "pending")
    _mig(pending, "Disabled", "Enabled")
    # The pool asks for Gen5 in its expectations; here the pool asks for what the slot gives.
    expect = {**EXAMPLE_EXPECT, "gpu": {**EXAMPLE_EXPECT["gpu"], "pcie": {"gen": 4, "width": 16}}}
    verdicts = []
    for root in (slot, pending):
        results = _check(root, expect=expect)
        assert not [r for r in results if r["verdict"] == "fail"]
        verdicts.append(node_verdict(results))
    assert verdicts == [Verdict.WARN, Verdict.WARN]
    assert run_verdict([*verdicts, node_verdict(_check(h200x1))]) is Verdict.WARN
