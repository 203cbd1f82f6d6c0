"""Where the project lives: a gpurack checkout (found from the working directory) or none.

In a checkout, playbooks are its files and ansible.cfg is its own. Outside one, the driver
runs the installed collection's playbooks by FQCN (`gpurack.bootstrap.site`) with Ansible's
own configuration, and keeps its state under the user's state folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gpurack import collection
from gpurack.errors import UsageError

PROJECT_ENV = "GPURACK_PROJECT"
STATE_ENV = "GPURACK_STATE_DIR"
COLLECTION = collection.FQCN
_GALAXY_NAME = re.compile(r"^(namespace|name):\s*['\"]?([\w]+)", re.MULTILINE)


def find_checkout(start: Path | None = None) -> Path | None:
    """$GPURACK_PROJECT, else the nearest folder at or above `start` (default: the working
    directory) that holds the gpurack.bootstrap collection's galaxy.yml; None outside one."""
    override = os.environ.get(PROJECT_ENV)
    if override:
        return Path(override).expanduser().resolve()
    here = (start or Path.cwd()).resolve()
    return next((folder for folder in (here, *here.parents) if is_checkout(folder)), None)


def is_checkout(folder: Path) -> bool:
    """True when folder is a source tree of the collection: galaxy.yml naming gpurack.bootstrap."""
    try:
        text = (folder / "galaxy.yml").read_text(encoding="utf-8")
    except OSError:
        return False
    fields = dict(_GALAXY_NAME.findall(text))
    return f"{fields.get('namespace')}.{fields.get('name')}" == COLLECTION


def project_root() -> Path:
    """Return the checkout (see find_checkout).

    Raises:
        UsageError: not inside a checkout and $GPURACK_PROJECT unset.
    """
    root = find_checkout()
    if root is None:
        raise UsageError(f"not inside a gpurack checkout ({Path.cwd()}): cd into one or set ${PROJECT_ENV}")
    return root


def state_dir() -> Path:
    """The folder for run artifacts and local state: $GPURACK_STATE_DIR, else <checkout>/.gpurack,
    else $XDG_STATE_HOME/gpurack (~/.local/state/gpurack)."""
    override = os.environ.get(STATE_ENV)
    if override:
        return Path(override).expanduser().resolve()
    root = find_checkout()
    if root is not None:
        return root / ".gpurack"
    xdg = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(xdg).expanduser() / "gpurack"


def ansible_config() -> Path | None:
    """The checkout's ansible.cfg; None outside a checkout (Ansible's own lookup applies)."""
    root = find_checkout()
    return None if root is None else root / "ansible.cfg"


def resolve_playbook(name: str) -> Path | str:
    """The playbook to run: a file, or outside a checkout the installed collection's FQCN.

    A path that exists wins. In a checkout a bare name like `preflight` means
    playbooks/preflight.yml; outside one it means `gpurack.bootstrap.preflight` when the
    installed collection has that playbook (an FQCN given as such is checked the same way).

    Raises:
        UsageError: no such playbook.
    """
    given = Path(name).expanduser()
    root = find_checkout()
    candidates = [given]
    if root is not None and not given.is_absolute():
        candidates.append(root / given)
    if root is not None and given.parent == Path("."):
        candidates += [root / "playbooks" / name, root / "playbooks" / f"{name}.yml"]
    for candidate in candidates:
        if candidate.is_file():
            return candidate.resolve()
    if root is None:
        fqcn = name if name.startswith(f"{COLLECTION}.") else f"{COLLECTION}.{name}"
        if collection.find_playbook(fqcn.removeprefix(f"{COLLECTION}."), None) is not None:
            return fqcn
        candidates.append(Path(fqcn))
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
