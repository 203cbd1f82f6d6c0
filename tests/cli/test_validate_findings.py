"""gpurack validate on edited copies of the real H200 capture, with the example h200-inference
pool (inventory/example): what used to pass silently (issue 13, "Silent wrong results")."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import invoke

REPO = Path(__file__).resolve().parents[2]
POOL_DIR = REPO / "inventory/example/group_vars/h200_inference"


def _validate(
    capsys: pytest.CaptureFixture[str], root: Path, *extra: str | Path
) -> tuple[int, dict[str, Any]]:
    argv = ["validate", "--from-capture", root, "--expect", POOL_DIR / "expect.yml", "--no-record", *extra]
    result = invoke(capsys, *argv, "--json")
    text = invoke(capsys, *argv)
    assert text.code == result.code
    data: dict[str, Any] = json.loads(result.out)
    data["text"] = text.out
    return result.code, data


def _one(data: dict[str, Any], check_id: str) -> dict[str, Any]:
    [found] = [r for r in data["results"] if r["id"] == check_id]
    return found


def test_nvidia_smi_listing_no_gpu_exits_1_with_both_counts(
    capsys: pytest.CaptureFixture[str], h200x1: Path, writable_capture: Callable[[Path, str], Path]
) -> None:
    root = writable_capture(h200x1, "capture")
    xml = root / "nvidia-smi-q.xml"
    text = re.sub(r"<gpu id=.*?</gpu>\s*", "", xml.read_text(), flags=re.DOTALL)
    xml.write_text(text.replace("<attached_gpus>1</attached_gpus>", "<attached_gpus>0</attached_gpus>"))
    code, data = _validate(capsys, root, "--pool", POOL_DIR / "pool.yml")
    assert code == 1
    assert data["summary"]["verdict"] == "fail"
    visible = _one(data, "gpu.pci_visible")
    assert visible["measured"] == {"nvidia_smi": 0, "pci": 1}
    assert "nvidia-smi lists 0 GPU(s), the PCI bus shows 1" in visible["reason"]
    assert "verdict: fail" in data["text"]


def test_a_gen5_gpu_in_a_gen4_slot_prints_verdict_warn(
    capsys: pytest.CaptureFixture[str],
    h200x1: Path,
    tmp_path: Path,
    writable_capture: Callable[[Path, str], Path],
) -> None:
    root = writable_capture(h200x1, "capture")
    xml = root / "nvidia-smi-q.xml"
    text = xml.read_text()
    for old, new in (
        ("<max_host_link_gen>N/A</max_host_link_gen>", "<max_host_link_gen>4</max_host_link_gen>"),
        ("<max_link_gen>5</max_link_gen>", "<max_link_gen>4</max_link_gen>"),
        ("<current_link_gen>5</current_link_gen>", "<current_link_gen>4</current_link_gen>"),
    ):
        assert old in text
        text = text.replace(old, new, 1)
    xml.write_text(text)
    expect = tmp_path / "expect.yml"
    expect.write_text("gpu: {count: 1, model: NVIDIA H200, pcie: {gen: 4, width: 16}}\n")
    result = invoke(capsys, "validate", "--from-capture", root, "--expect", expect, "--no-record")
    assert result.code == 0, result.out + result.err
    assert "verdict: warn" in result.out
    assert "verdict: pass" not in result.out


def test_mig_enabled_in_the_full_gpu_example_pool_exits_1(
    capsys: pytest.CaptureFixture[str], h200x1: Path, writable_capture: Callable[[Path, str], Path]
) -> None:
    root = writable_capture(h200x1, "capture")
    xml = root / "nvidia-smi-q.xml"
    xml.write_text(
        xml.read_text().replace("<current_mig>Disabled</current_mig>", "<current_mig>Enabled</current_mig>")
    )
    code, data = _validate(capsys, root, "--pool", POOL_DIR / "pool.yml")
    assert code == 1
    mig = _one(data, "gpu.mig_mode")
    assert mig["verdict"] == "fail" and "shares GPUs as full-gpu" in mig["reason"]
    assert "-mig 0" in mig["remediation"]


def test_impossible_value_is_not_assessed_naming_it(
    capsys: pytest.CaptureFixture[str], h200x1: Path, writable_capture: Callable[[Path, str], Path]
) -> None:
    root = writable_capture(h200x1, "capture")
    xml = root / "nvidia-smi-q.xml"
    xml.write_text(xml.read_text().replace("<total>143771 MiB</total>", f"<total>{10**23} MiB</total>", 1))
    result = invoke(capsys, "validate", "--from-capture", root, "--expect", POOL_DIR / "expect.yml")
    assert result.code == 2, result.out + result.err
    assert f"FB memory total is {10**23}" in result.err
    assert "Traceback" not in result.err
