"""The gpurack.bootstrap collection the driver uses, found through Ansible's collections paths.

The driver imports the collection's module_utils (`ansible_collections.gpurack.bootstrap`);
make_importable() puts the collections path holding it on sys.path: in a checkout the one
its ansible.cfg names (`./.collections`, which links the repository root, ahead of any
installed copy), elsewhere the paths Ansible is configured with, where `ansible-galaxy
collection install` put it. Stdlib only; ansible-core is imported only outside a checkout.
"""

from __future__ import annotations

import configparser
import importlib.util
import os
import sys
from pathlib import Path

FQCN = "gpurack.bootstrap"
PACKAGE = f"ansible_collections.{FQCN}"
_ENV_KEYS = ("ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_COLLECTIONS_PATHS")
_CFG_KEYS = ("collections_path", "collections_paths")


def _importable() -> bool:
    try:
        return importlib.util.find_spec(PACKAGE) is not None
    except ModuleNotFoundError:  # a parent package (ansible_collections.gpurack) is missing
        return False


def collections_paths(checkout: Path | None) -> list[Path]:
    """Where Ansible looks for collections, in its order of precedence.

    $ANSIBLE_COLLECTIONS_PATH first (as for ansible-playbook); in a checkout then its
    ansible.cfg's paths; outside one, without the variable, Ansible's configured paths (its
    ansible.cfg lookup and defaults).
    """
    env = next((os.environ[key] for key in _ENV_KEYS if os.environ.get(key)), None)
    paths = [] if env is None else _split(env, Path.cwd())
    if checkout is not None:
        return [*paths, *_from_cfg(checkout / "ansible.cfg")]
    if paths:
        return paths
    # Imported on use: ansible-core's configuration takes a few hundred milliseconds to load.
    import ansible.constants  # noqa: PLC0415

    return [Path(p) for p in ansible.constants.COLLECTIONS_PATHS]


def _from_cfg(cfg: Path) -> list[Path]:
    """The collections path an ansible.cfg names, relative to its folder as Ansible reads it."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(cfg, encoding="utf-8")
    for key in _CFG_KEYS:
        value = parser.get("defaults", key, fallback="")
        if value:
            return _split(value, cfg.parent)
    return [Path.home() / ".ansible" / "collections", Path("/usr/share/ansible/collections")]


def _split(value: str, base: Path) -> list[Path]:
    return [(base / Path(p).expanduser()).resolve() for p in value.split(os.pathsep) if p]


def find(checkout: Path | None) -> Path | None:
    """The collections path that holds gpurack.bootstrap, None when none does."""
    paths = collections_paths(checkout)
    return next((p for p in paths if (p / "ansible_collections" / "gpurack" / "bootstrap").is_dir()), None)


def find_playbook(name: str, checkout: Path | None) -> Path | None:
    """The file of the collection's playbook `name` (e.g. preflight), None when it has none."""
    root = find(checkout)
    if root is None:
        return None
    path = root / "ansible_collections" / "gpurack" / "bootstrap" / "playbooks" / f"{name}.yml"
    return path if path.is_file() else None


def make_importable(checkout: Path | None) -> Path | None:
    """Put the collections path holding gpurack.bootstrap first on sys.path; return it.

    Outside a checkout, a collection that is importable already (PYTHONPATH) is kept as it is.
    Returns None when nothing was added; importing module_utils then fails with Python's error.
    """
    if checkout is None and _importable():
        return None
    root = find(checkout)
    if root is None:
        return None
    entry = str(root)
    if entry in sys.path:
        sys.path.remove(entry)
    sys.path.insert(0, entry)
    return root
