"""Where the driver finds the project and its state."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpurack import project
from gpurack.errors import UsageError

REPO = Path(__file__).resolve().parents[2]


def test_project_root_defaults_to_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(project.PROJECT_ENV, raising=False)
    assert project.project_root() == REPO
    assert project.ansible_config() == REPO / "ansible.cfg"


def test_project_root_follows_env_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(project.PROJECT_ENV, str(tmp_path))
    monkeypatch.delenv(project.STATE_ENV, raising=False)
    assert project.project_root() == tmp_path
    assert project.state_dir() == tmp_path / ".gpurack"


def test_resolve_playbook_absolute_path_wins(tmp_path: Path) -> None:
    playbook = tmp_path / "mine.yml"
    playbook.write_text("[]\n")
    assert project.resolve_playbook(str(playbook)) == playbook


def test_resolve_playbook_missing_raises_usage_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(project.PROJECT_ENV, str(tmp_path))
    with pytest.raises(UsageError, match="playbook not found: nope"):
        project.resolve_playbook("nope")
