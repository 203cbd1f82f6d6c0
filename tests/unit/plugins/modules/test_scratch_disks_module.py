"""scratch_disks: the nvme_scratch role's thin module over module_utils/storage/scratch.py."""

from __future__ import annotations

import pytest
from module_helpers import run_module

ARGS = {"md_name": "gpurack-scratch", "md_device": "/dev/md/gpurack-scratch", "fs_label": "gpuscratch"}


@pytest.mark.parametrize("check_mode", [False, True])
def test_scratch_disks_missing_path_is_refused_and_plans_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], check_mode: bool
) -> None:
    result = run_module(
        monkeypatch,
        capsys,
        "scratch_disks",
        devices=["/dev/gpurack-no-such-disk"],
        _ansible_check_mode=check_mode,
        **ARGS,
    )
    assert result["changed"] is False
    assert [d["block"] for d in result["probe"]["disks"]] == [False]
    assert (result["plan"]["layout"], result["plan"]["unusable"]) == ("none", ["/dev/gpurack-no-such-disk"])
    assert result["plan"]["refused"] == ["/dev/gpurack-no-such-disk (not a block device)"]


def test_scratch_disks_no_candidates_plans_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_module(monkeypatch, capsys, "scratch_disks", devices=[], **ARGS)
    assert (result["probe"]["disks"], result["plan"]["layout"], result["plan"]["create"]) == (
        [],
        "none",
        False,
    )


def test_scratch_disks_requires_the_names(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_module(monkeypatch, capsys, "scratch_disks", devices=[])
    assert result["failed"] is True
    assert "md_name" in result["msg"]
