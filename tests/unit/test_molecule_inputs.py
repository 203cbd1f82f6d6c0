"""tools/molecule_inputs.py: the digest under which a Molecule scenario's pass is kept must move
with every file the scenario reaches and with nothing else (docs/molecule.md, "A pass is kept")."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "molecule_inputs.py"
UTILS = "ansible_collections.gpurack.bootstrap.plugins.module_utils"

TREE = {
    "molecule/s/molecule.yml": "---\n",
    "molecule/s/converge.yml": "- ansible.builtin.include_role:\n    name: gpurack.bootstrap.r1\n",
    "molecule/resources/verify/r1.yml": "- ansible.builtin.assert: {that: [true]}\n",
    "roles/r1/tasks/main.yml": (
        '- gpurack.bootstrap.m1:\n    x: "{{ 1 | gpurack.bootstrap.f1 }}"\n'
        "- ansible.builtin.include_role:\n    name: gpurack.bootstrap.r3\n"
    ),
    "roles/r2/tasks/main.yml": "- gpurack.bootstrap.m2: {}\n",
    "roles/r3/tasks/main.yml": "- ansible.builtin.debug: {}\n",
    "plugins/modules/m1.py": f"from {UTILS}.pkg import a\n",
    "plugins/modules/m2.py": f"from {UTILS} import other\n",
    "plugins/module_utils/pkg/__init__.py": "",
    "plugins/module_utils/pkg/a.py": f"from {UTILS}.pkg.b import thing\n",
    "plugins/module_utils/pkg/b.py": "thing = 1\n",
    "plugins/module_utils/other.py": "x = 1\n",
    "plugins/filter/f.py": 'def filters():\n    return {"f1": len, "f2": len}\n',
    "plugins/filter/f1.yml": "DOCUMENTATION: {}\n",
    "plugins/filter/g.py": 'def filters():\n    return {"g1": len}\n',
    "plugins/filter/g1.yml": "DOCUMENTATION: {}\n",
    "tools/molecule.sh": "#!/bin/sh\n",
}


def _load(root: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("molecule_inputs", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "ROOT", root)
    return module


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    for name, text in TREE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _names(module: ModuleType, root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in module.scenario_inputs("s")}


def test_the_inputs_follow_roles_modules_filters_and_their_imports(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = _names(_load(tree, monkeypatch), tree)
    for reached in ("roles/r1/tasks/main.yml", "roles/r3/tasks/main.yml", "plugins/modules/m1.py",
                    "plugins/module_utils/pkg/__init__.py", "plugins/module_utils/pkg/a.py",
                    "plugins/module_utils/pkg/b.py", "plugins/filter/f.py", "plugins/filter/f1.yml",
                    "molecule/resources/verify/r1.yml", "tools/molecule.sh"):  # fmt: skip
        assert reached in names, reached
    for unreached in ("roles/r2/tasks/main.yml", "plugins/modules/m2.py", "plugins/module_utils/other.py",
                      "plugins/filter/g.py"):  # fmt: skip
        assert unreached not in names, unreached


@pytest.mark.parametrize(
    "changed", ["plugins/module_utils/pkg/b.py", "roles/r3/tasks/main.yml", "plugins/filter/f.py"]
)
def test_a_change_to_a_reached_file_moves_the_digest(
    tree: Path, monkeypatch: pytest.MonkeyPatch, changed: str
) -> None:
    module = _load(tree, monkeypatch)
    before = module.digest(module.scenario_inputs("s"))
    (tree / changed).write_text((tree / changed).read_text() + "# changed\n")
    assert module.digest(module.scenario_inputs("s")) != before


def test_unreached_files_and_the_checkout_folder_leave_the_digest_alone(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _load(tree, monkeypatch)
    before = module.digest(module.scenario_inputs("s"))
    (tree / "plugins/module_utils/other.py").write_text("x = 2\n")
    (tree / "roles/r2/tasks/main.yml").write_text("---\n")
    assert module.digest(module.scenario_inputs("s")) == before
    moved = shutil.copytree(tree, tree.parent / "elsewhere")
    module = _load(moved, monkeypatch)
    assert module.digest(module.scenario_inputs("s")) == before


def test_the_real_scenarios_reach_their_roles() -> None:
    spec = importlib.util.spec_from_file_location("molecule_inputs_real", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    root = module.ROOT

    def inside(scenario: str) -> set[str]:
        return {str(p.relative_to(root)) for p in module.scenario_inputs(scenario) if root in p.parents}

    raid0 = inside("nvme_scratch_raid0")
    assert "roles/nvme_scratch/tasks/main.yml" in raid0 and "plugins/modules/scratch_disks.py" in raid0
    assert "plugins/module_utils/storage/scratch.py" in raid0 and "lab/images/vm.sh" in raid0
    default = inside("default")
    for role in ("os_tuning", "nvme_scratch", "nvidia_driver", "cuda", "container_runtime", "fabric"):
        assert f"roles/{role}/tasks/main.yml" in default, role
    # converge_stamp's action plugin, and the callback Molecule's configuration enables for it.
    assert {"plugins/action/converge_stamp.py", "plugins/callback/host_changes.py"} <= default


def test_the_environment_that_changes_a_run_moves_the_digest(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _load(tree, monkeypatch)
    paths = module.scenario_inputs("s")
    quiet = {"PATH": "/usr/bin", "HOME": "/root", "ANSIBLE_CONFIG": "/elsewhere/ansible.cfg"}
    assert module.digest(paths, quiet) == module.digest(paths, {})
    for name, value in (("DEBIAN_MIRROR", "http://mirror.example/debian"), ("ANSIBLE_FORKS", "5"),
                        ("MOLECULE_NO_LOG", "false"), ("GPURACK_MOLECULE_DISK_SIZE", "2G")):  # fmt: skip
        assert module.digest(paths, {**quiet, name: value}) != module.digest(paths, quiet), name
