"""Where the project lives: playbooks, ansible.cfg and the driver's state folder."""

from __future__ import annotations

import os
from pathlib import Path

from gpurack.errors import UsageError

PROJECT_ENV = "GPURACK_PROJECT"
STATE_ENV = "GPURACK_STATE_DIR"


def project_root() -> Path:
    """Return the collection checkout: $GPURACK_PROJECT, else the repository holding this file."""
    override = os.environ.get(PROJECT_ENV)
    if override:
        return Path(override).expanduser().resolve()
    return Path(__file__).resolve().parents[2]


def state_dir() -> Path:
    """Return the folder for run artifacts and local state: $GPURACK_STATE_DIR or <project>/.gpurack."""
    override = os.environ.get(STATE_ENV)
    if override:
        return Path(override).expanduser().resolve()
    return project_root() / ".gpurack"


def ansible_config() -> Path:
    """Return the project's ansible.cfg."""
    return project_root() / "ansible.cfg"


def resolve_playbook(name: str) -> Path:
    """Return the absolute playbook path; a bare name like `preflight` means playbooks/preflight.yml.

    Raises:
        UsageError: no such playbook.
    """
    given = Path(name).expanduser()
    candidates = [given]
    if not given.is_absolute():
        candidates.append(project_root() / given)
    if given.parent == Path("."):
        candidates += [project_root() / "playbooks" / name, project_root() / "playbooks" / f"{name}.yml"]
    for candidate in candidates:
        if candidate.is_file():
            return candidate.resolve()
    raise UsageError(f"playbook not found: {name} (looked in {', '.join(str(c) for c in candidates)})")


def resolve_inventory(name: str) -> Path:
    """Return the absolute inventory path (file or folder).

    Raises:
        UsageError: no such inventory.
    """
    path = Path(name).expanduser()
    if not path.exists():
        raise UsageError(f"inventory not found: {name}")
    return path.resolve()
