# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Converge filters: role_digest, role_options (docs: sidecar .yml files)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml
from ansible.errors import AnsibleFilterError

# The collection's plugins: a role's behaviour also lives in the modules and filters it calls.
_PLUGINS = Path(__file__).resolve().parents[1]


def _tree(root: Path) -> Iterator[bytes]:
    """Each file's relative name and content, in a fixed order."""
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        for name in sorted(files):
            path = Path(folder, name)
            yield os.fspath(path.relative_to(root)).encode() + b"\0"
            yield path.read_bytes()


def role_digest(role_path: str) -> str:
    """A digest of the role's files and of the collection's plugins: a new version changes it."""
    root = Path(role_path)
    if not root.is_dir():
        raise AnsibleFilterError(f"role_digest expects a role's folder (role_path), got {role_path!r}")
    sha = hashlib.sha256()
    for chunk in (*_tree(root), *_tree(_PLUGINS)):
        sha.update(chunk)
    return sha.hexdigest()


def role_options(role_path: str, entry_point: str = "main") -> list[str]:
    """The variables the role's argument spec declares for an entry point: what it decides on."""
    spec_file = Path(role_path, "meta", "argument_specs.yml")
    try:
        specs = yaml.safe_load(spec_file.read_text(encoding="utf-8"))
        options = specs["argument_specs"][entry_point].get("options") or {}
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError) as exc:
        message = f"role_options: cannot read {entry_point!r} from {spec_file}: {exc}"
        raise AnsibleFilterError(message) from exc
    return sorted(options)


class FilterModule:
    """gpurack.bootstrap converge filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {"role_digest": role_digest, "role_options": role_options}
