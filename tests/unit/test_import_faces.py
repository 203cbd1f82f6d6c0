"""The import contract on module_utils' faces fails on a deep import and holds on a face import.

The contract is pyproject.toml's own (read from there, not restated): a probe package is added to
its root and source packages, once importing a module below a face and once the face itself.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
FACES = "The driver, the lab, the modules and the filters use module_utils only through its packages' faces"
MODULE_UTILS = "ansible_collections.gpurack.bootstrap.plugins.module_utils"


def _faces_contract() -> dict[str, object]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    return next(c for c in config["contracts"] if c["name"] == FACES)


def _lint(tmp_path: Path, probe_source: str) -> subprocess.CompletedProcess[str]:
    package = tmp_path / "face_probe"
    package.mkdir()
    (package / "__init__.py").write_text(probe_source)
    contract = _faces_contract()
    # The probe stands in for the driver and the lab, which are not roots of this small graph.
    plugins = [m for m in contract["source_modules"] if m.startswith("ansible_collections.")]  # type: ignore[attr-defined]
    sources = ", ".join(f'"{m}"' for m in [*plugins, "face_probe"])
    forbidden = ", ".join(f'"{m}"' for m in contract["forbidden_modules"])  # type: ignore[attr-defined]
    config = tmp_path / "importlinter.toml"
    config.write_text(
        "[tool.importlinter]\n"
        'root_packages = ["face_probe", "ansible_collections.gpurack.bootstrap.plugins"]\n'
        "include_external_packages = true\n"
        "[[tool.importlinter.contracts]]\n"
        f'name = "faces"\ntype = "{contract["type"]}"\n'
        f"source_modules = [{sources}]\nforbidden_modules = [{forbidden}]\n"
        f"allow_indirect_imports = {str(contract['allow_indirect_imports']).lower()}\n"
    )
    env = {"PYTHONPATH": f"{REPO / '.collections'}:{tmp_path}", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    return subprocess.run(
        [LINT_IMPORTS, str(config), "--no-cache"],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )


@pytest.mark.parametrize(
    "deep_import",
    [
        f"from {MODULE_UTILS}.facts.gpu import gather_gpu\n",
        f"from {MODULE_UTILS}.checks import registry\n",
        f"import {MODULE_UTILS}.results.model\n",
    ],
)
def test_a_deep_import_breaks_the_contract(tmp_path: Path, deep_import: str) -> None:
    result = _lint(tmp_path, deep_import)
    assert result.returncode == 1, result.stdout + result.stderr
    report = " ".join(result.stdout.split())  # lint-imports wraps long lines
    assert "faces BROKEN" in report
    assert f"face_probe -> {MODULE_UTILS}." in report


def test_importing_the_faces_keeps_the_contract(tmp_path: Path) -> None:
    result = _lint(
        tmp_path,
        f"from {MODULE_UTILS}.facts import gather_gpu\nfrom {MODULE_UTILS} import checks, errors, results\n",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "faces KEPT" in result.stdout
