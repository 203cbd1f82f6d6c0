"""platform_objects: the objects and capacity of a site, in check mode too; overcommit fails first."""

from __future__ import annotations

from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.objects import build_objects
from module_helpers import run_module
from platform_inputs import TEAMS, site


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **args: Any) -> dict[str, Any]:
    return run_module(monkeypatch, capsys, "platform_objects", **args)


def test_platform_objects_returns_every_object_and_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _run(monkeypatch, capsys, site=site().to_dict())
    assert result["changed"] is False
    assert result["objects"] == build_objects(site())
    assert result["capacity"][0]["pool"] == "h100-train-a"
    assert result["capacity"][0]["nominal"] == 16


def test_platform_objects_in_check_mode_builds_the_same_objects(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _run(monkeypatch, capsys, site=site().to_dict(), sections=["kueue"], _ansible_check_mode=True)
    assert result["changed"] is False
    assert result["objects"] == build_objects(site(), ("kueue",))


def test_platform_objects_fails_on_overcommit_naming_team_and_pool(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    teams = [{**TEAMS[0], "quota": {"h100-train-a": {"gpus": 17}}}]
    result = _run(monkeypatch, capsys, site=site(gpurack_teams=teams).to_dict())
    assert result["failed"] is True
    assert result["msg"].startswith(
        "Refusing the platform objects: team research asks 17 GPUs of pool h100-train-a, "
        "which has 16 (expect)"
    )
    assert "objects" not in result
    assert result["capacity"][0]["teams"] == {"research": 17}


def test_platform_objects_allows_overcommit_when_the_site_does(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    teams = [{**TEAMS[0], "quota": {"h100-train-a": {"gpus": 17}}}]
    data = site(gpurack_teams=teams, gpurack_quota_overcommit=True).to_dict()
    result = _run(monkeypatch, capsys, site=data)
    assert result.get("failed") is not True
    assert result["objects"]


def test_platform_objects_refuses_a_bad_site(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = site().to_dict()
    data["teams"][0]["quota"] = {"h100-train-b": {"gpus": 1}}
    result = _run(monkeypatch, capsys, site=data)
    assert result["failed"] is True
    assert "Invalid platform site: team inference: quota names pool 'h100-train-b'" in result["msg"]
