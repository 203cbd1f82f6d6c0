#!/usr/bin/env python3
"""Print one digest of every file a Molecule scenario's result depends on.

    tools/molecule_inputs.py SCENARIO           the sha256 and the number of files
    tools/molecule_inputs.py SCENARIO --list    the files, one per line

tools/molecule.sh keeps a scenario's pass under this digest and does not run it again while
the digest is the same (docs/molecule.md, "A pass is kept"). So the set must hold everything
the run reads: the scenario and the shared Molecule files, the scripts that build the node
image and the VM, the environment variables that change either or the run (ENVIRONMENT), the
pinned tool versions, the collection's metadata, every role the scenario names (and the roles
those name), every module, action, filter and callback plugin they name (by FQCN: roles outside the
collection's own plays must, and these roles do), the module_utils files those import, and
the real capture the default scenario replays. Molecule's own configuration enables
profile_tasks and host_changes, so the checkout's preload callback is not part of a run. A
file left out here would let a change pass unseen; a file too many only costs a run.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Environment variables that change what a run builds or does: the scripts' knobs, and every
# ANSIBLE_ or MOLECULE_ setting (Molecule passes the caller's environment on), except the ones
# tools/molecule.sh sets itself to the checkout's files or to plain output.
ENVIRONMENT = (
    "DEBIAN_MIRROR",
    "FORCE",
    "GPURACK_MOLECULE_DISK_SIZE",
    "GPURACK_NODE_IMAGE_REPO",
    "GPURACK_VM_ROOTFS_SIZE",
    "STANDIN_DRIVER_VERSIONS",
)
ENVIRONMENT_PREFIXES = ("ANSIBLE_", "MOLECULE_")
ENVIRONMENT_IGNORED = ("ANSIBLE_CONFIG", "ANSIBLE_FORCE_COLOR", "ANSIBLE_NOCOLOR")
FQCN = re.compile(r"gpurack\.bootstrap\.(\w+)")
UTILS_PACKAGE = "ansible_collections.gpurack.bootstrap.plugins.module_utils"
ALWAYS = (
    "tools/molecule.sh",
    "tools/molecule_inputs.py",
    "ansible.cfg",
    "galaxy.yml",
    "meta/runtime.yml",
    "pyproject.toml",
    "requirements",
    ".config/molecule",
    "molecule/resources",
    "lab/images/build-node-image.sh",
    "lab/images/vm.sh",
    "lab/images/build-vm-image.sh",
    "../shared/fixtures/hw/h200x1",
)


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        return []
    return sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def _filter_files(name: str) -> set[Path]:
    """The filter plugin files that define `name` (a filter's name is a key of its file's
    filters() mapping; its sidecar documentation file carries the same name)."""
    if not (ROOT / "plugins/filter" / f"{name}.yml").is_file():
        return set()
    quoted = re.compile(rf"[\"']{re.escape(name)}[\"']")
    folder = ROOT / "plugins/filter"
    found = {p for p in folder.glob("*.py") if quoted.search(p.read_text(encoding="utf-8"))}
    return found | {folder / f"{name}.yml"}


def _utils_imports(source: Path) -> set[Path]:
    """The module_utils files a Python plugin imports, each package's __init__ included."""
    found: set[Path] = set()
    tree = ast.parse(source.read_text(encoding="utf-8"), str(source))
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(UTILS_PACKAGE):
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith(UTILS_PACKAGE)]
        for name in names:
            base = ROOT / "plugins/module_utils"
            found.add(base / "__init__.py")
            for part in name[len(UTILS_PACKAGE) :].strip(".").split("."):
                base = base / part
                found |= {base.with_suffix(".py"), base / "__init__.py"}
    return {path for path in found if path.is_file()}


def scenario_inputs(scenario: str) -> list[Path]:
    """Every file the scenario's result depends on, sorted."""
    inputs: set[Path] = set()
    for name in (*ALWAYS, f"molecule/{scenario}"):
        inputs.update(_files(ROOT / name))
    pending = sorted(inputs)
    seen_names: set[str] = set()
    while pending:
        path = pending.pop()
        found: set[Path] = set()
        if path.suffix == ".py" and ROOT / "plugins" in path.parents:
            found |= _utils_imports(path)
        if path.suffix in (".yml", ".yaml", ".j2", ".py"):
            for name in set(FQCN.findall(path.read_text(encoding="utf-8", errors="replace"))) - seen_names:
                seen_names.add(name)
                found.update(_files(ROOT / "roles" / name))
                found.update(_files(ROOT / "plugins/modules" / f"{name}.py"))
                found.update(_files(ROOT / "plugins/action" / f"{name}.py"))
                found.update(_files(ROOT / "plugins/callback" / f"{name}.py"))
                found.update(_filter_files(name))
        new = found - inputs
        inputs |= new
        pending.extend(sorted(new))
    return sorted(inputs)


def environment(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """The environment variables of ENVIRONMENT and ENVIRONMENT_PREFIXES that are set, sorted."""
    return sorted(
        (name, value)
        for name, value in env.items()
        if (name in ENVIRONMENT or name.startswith(ENVIRONMENT_PREFIXES)) and name not in ENVIRONMENT_IGNORED
    )


def digest(paths: list[Path], env: Mapping[str, str] | None = None) -> str:
    """One SHA-256 of the files (their path from the checkout, executable bits and content) and
    of the environment that changes a run (`env`, default os.environ)."""
    sha = hashlib.sha256()
    for name, value in environment(os.environ if env is None else env):
        sha.update(f"env\0{name}\0{value}\0".encode())
    for path in paths:
        sha.update(f"{os.path.relpath(path, ROOT)}\0{path.stat().st_mode & 0o111}\0".encode())
        sha.update(hashlib.sha256(path.read_bytes()).digest())
    return sha.hexdigest()


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2) or (len(argv) == 2 and argv[1] != "--list"):
        print("usage: molecule_inputs.py SCENARIO [--list]", file=sys.stderr)
        return 64
    if not (ROOT / "molecule" / argv[0] / "molecule.yml").is_file():
        print(f"molecule_inputs.py: no scenario molecule/{argv[0]}", file=sys.stderr)
        return 64
    paths = scenario_inputs(argv[0])
    if len(argv) == 2:
        print("\n".join(os.path.relpath(p, ROOT) for p in paths))
    else:
        print(digest(paths), len(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
