"""The root requirements.yml: every collection the roles and playbooks call, at versions galaxy.yml
accepts, the ones installed here, and an offline install from it that needs nothing fetched."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import ansible_collections
import yaml
from packaging.specifiers import SpecifierSet

REPO = Path(__file__).resolve().parents[2]
GALAXY = Path(sys.executable).with_name("ansible-galaxy")


def _pinned() -> dict[str, str]:
    doc = yaml.safe_load((REPO / "requirements.yml").read_text())
    return {c["name"]: str(c["version"]) for c in doc["collections"]}


def _installed() -> dict[str, str]:
    out = subprocess.run(
        [GALAXY, "collection", "list", "--format", "json"], check=True, capture_output=True, text=True
    ).stdout
    found: dict[str, str] = {}
    for collections in json.loads(out).values():
        for name, info in collections.items():
            found.setdefault(name, info["version"])
    return found


def test_requirements_cover_every_collection_the_roles_and_playbooks_call() -> None:
    used: set[str] = set()
    for path in [*REPO.glob("roles/*/*/*.yml"), *REPO.glob("playbooks/*.yml")]:
        used |= set(re.findall(r"^\s*-?\s*([a-z_]+\.[a-z_]+)\.[a-z_0-9]+:\s*$", path.read_text(), re.M))
    assert used - {"ansible.builtin", "gpurack.bootstrap"} <= set(_pinned())


def test_requirements_pin_versions_galaxy_yml_accepts() -> None:
    ranges = yaml.safe_load((REPO / "galaxy.yml").read_text())["dependencies"]
    pinned = _pinned()
    assert set(ranges) == set(pinned)
    for name, spec in ranges.items():
        assert pinned[name] in SpecifierSet(spec.replace(" ", "")), (name, pinned[name], spec)


def test_requirements_are_the_versions_installed_and_tested_here() -> None:
    installed = _installed()
    for name, version in _pinned().items():
        assert installed.get(name) == version, (name, installed.get(name), version)


def test_awx_reads_the_same_file() -> None:
    link = REPO / "collections" / "requirements.yml"
    assert link.is_symlink()
    assert link.resolve() == (REPO / "requirements.yml").resolve()


def test_offline_install_from_requirements_finds_everything_installed(tmp_path: Path) -> None:
    installed_at = {
        str(Path(p).parent) for p in ansible_collections.__path__ if (Path(p) / "ansible" / "posix").is_dir()
    }
    result = subprocess.run(
        [GALAXY, "collection", "install", "--offline", "-r", REPO / "requirements.yml", "-p", *installed_at],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "Nothing to do. All requested collections are already installed." in result.stdout
