"""The product and the lab, apart: the collection tarball holds no development files, and no
role or plugin reads the lab folder."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from conftest import REPO

# Top-level folders and files of the checkout that are for development only.
DEV_TOP = {"lab", "molecule", "benchmarks", "tests", "tools", "inventory", ".ci", ".config", ".collections"}
DEV_FILES = {"ansible.cfg", "pyproject.toml", "Makefile", ".gitignore", ".yamllint", ".ansible-lint"}
DEV_DOCS = {"docs/lab.md", "docs/lab-kubernetes.md", "docs/molecule.md"}
# What reading the lab folder would look like from a role or plugin: a path into lab/, the
# lab's Python package, its builds or its node image.
LAB_REFERENCE = re.compile(r"(?<![\w.-])lab/|\bgpurack_lab\b|k8s-build|build-node-image")


@pytest.fixture(scope="module")
def tarball_members(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    galaxy = Path(sys.executable).with_name("ansible-galaxy")
    if not galaxy.exists() and shutil.which("ansible-galaxy") is None:
        pytest.skip("ansible-galaxy is not installed")
    out = tmp_path_factory.mktemp("collection")
    subprocess.run(
        [str(galaxy if galaxy.exists() else "ansible-galaxy"), "collection", "build", "--output-path",
         str(out), str(REPO)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    (tarball,) = out.glob("gpurack-bootstrap-*.tar.gz")
    with tarfile.open(tarball) as archive:
        return [m.name.removeprefix("./") for m in archive.getmembers()]


def test_tarball_holds_the_product(tarball_members: list[str]) -> None:
    for needed in ("MANIFEST.json", "roles/preflight/tasks/main.yml", "playbooks/site.yml"):
        assert needed in tarball_members, needed
    assert any(m.startswith("plugins/module_utils/") for m in tarball_members)


def test_tarball_holds_no_lab_molecule_benchmark_or_test_files(tarball_members: list[str]) -> None:
    leaked = [
        m
        for m in tarball_members
        if m.split("/", 1)[0] in DEV_TOP
        or m in DEV_FILES
        or m in DEV_DOCS
        or re.search(r"(^|/)(test_[^/]*\.py|conftest\.py|bench_[^/]*|molecule\.yml)$", m)
        or "lab_kubernetes" in m
        or m.startswith("playbooks/templates")
    ]
    assert leaked == []


def test_no_role_or_plugin_reads_the_lab_folder() -> None:
    found = []
    for top in ("roles", "plugins", "playbooks", "meta"):
        for path in sorted((REPO / top).rglob("*")):
            if not path.is_file() or path.suffix in {".md", ".pyc"}:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [
                f"{path.relative_to(REPO)}:{n}: {line.strip()}"
                for n, line in enumerate(text.splitlines(), 1)
                if LAB_REFERENCE.search(line)
            ]
    assert found == []
