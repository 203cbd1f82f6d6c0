"""node_facts module: several sources in one run, and a source that cannot be read named, not fatal."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import H200X1
from module_helpers import run_module


def test_reads_only_the_sources_asked_for(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_module(monkeypatch, capsys, "node_facts", root=str(H200X1), sources=["gpu", "nvme"])
    assert sorted(result["ansible_facts"]) == ["gpurack_gpu", "gpurack_nvme"]
    assert result["ansible_facts"]["gpurack_gpu"]["count"] == 1
    assert (result["changed"], result["errors"]) == (False, {})


@pytest.mark.parametrize("fail_on_error", [False, True])
def test_a_malformed_source_is_named_and_fails_only_when_asked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, fail_on_error: bool
) -> None:
    broken = tmp_path / "h200x1"
    shutil.copytree(H200X1, broken, copy_function=shutil.copyfile)
    (broken / "nvme-list.json").write_text("# $ nvme list -o json\n{not json\n# rc=0\n")
    result = run_module(
        monkeypatch,
        capsys,
        "node_facts",
        root=str(broken),
        sources=["gpu", "nvme"],
        fail_on_error=fail_on_error,
    )
    assert list(result["errors"]) == ["gpurack_nvme"]
    assert result["errors"]["gpurack_nvme"]["msg"].startswith("Could not read NVMe facts:")
    assert result.get("failed", False) is fail_on_error
    if not fail_on_error:
        assert sorted(result["ansible_facts"]) == ["gpurack_gpu"]
