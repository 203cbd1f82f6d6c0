"""Where the driver finds the project and its state."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from gpurack import collection, project
from gpurack.errors import UsageError

REPO = Path(__file__).resolve().parents[2]


def test_project_root_defaults_to_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(project.PROJECT_ENV, raising=False)
    monkeypatch.chdir(REPO)
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


def _no_checkout(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Work from `folder`, outside any checkout."""
    monkeypatch.delenv(project.PROJECT_ENV, raising=False)
    monkeypatch.chdir(folder)
    assert project.find_checkout() is None


def _installed_collection(root: Path) -> Path:
    """A collections path holding gpurack.bootstrap with a preflight playbook."""
    playbooks = root / "ansible_collections" / "gpurack" / "bootstrap" / "playbooks"
    playbooks.mkdir(parents=True)
    (playbooks / "preflight.yml").write_text("[]\n")
    return root


def test_checkout_is_found_from_the_working_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(project.PROJECT_ENV, raising=False)
    monkeypatch.chdir(REPO / "roles" / "preflight")
    assert project.find_checkout() == REPO
    assert project.resolve_playbook("preflight") == REPO / "playbooks" / "preflight.yml"


def test_outside_a_checkout_playbooks_are_the_installed_collections(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_checkout(monkeypatch, tmp_path)
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(_installed_collection(tmp_path / "collections")))
    assert project.resolve_playbook("preflight") == "gpurack.bootstrap.preflight"
    assert project.resolve_playbook("gpurack.bootstrap.preflight") == "gpurack.bootstrap.preflight"
    with pytest.raises(UsageError, match="playbook not found: site"):
        project.resolve_playbook("site")
    assert project.ansible_config() is None
    with pytest.raises(UsageError, match="not inside a gpurack checkout"):
        project.project_root()


def test_outside_a_checkout_state_goes_to_the_users_state_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_checkout(monkeypatch, tmp_path)
    monkeypatch.delenv(project.STATE_ENV, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert project.state_dir() == tmp_path / "state" / "gpurack"


def test_a_checkout_puts_its_collection_first_on_sys_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANSIBLE_COLLECTIONS_PATH", raising=False)
    monkeypatch.setattr(sys, "path", ["/elsewhere", *sys.path])
    assert collection.make_importable(REPO) == REPO / ".collections"
    assert sys.path[0] == str(REPO / ".collections")


def test_outside_a_checkout_the_collection_comes_from_ansibles_paths(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    installed = _installed_collection(tmp_path / "collections")
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", f"{tmp_path / 'empty'}:{installed}")
    assert collection.find(None) == installed
    assert collection.find_playbook("preflight", None) == (
        installed / "ansible_collections" / "gpurack" / "bootstrap" / "playbooks" / "preflight.yml"
    )
    assert collection.find_playbook("site", None) is None


def test_a_checkout_falls_back_to_its_own_collection(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", str(tmp_path / "empty"))
    assert collection.collections_paths(REPO) == [tmp_path / "empty", REPO / ".collections"]
    assert collection.find(REPO) == REPO / ".collections"
