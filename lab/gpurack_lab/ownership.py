"""Which lab objects belong to which lab. A lab is its state folder: a light lab runs beside a
rack (the lab cluster of `make test`), and each one's `lab down` removes only what it made."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import yaml

from gpurack_lab.docker import Container


def made_by(container: Container, root: Path, network: str | None) -> bool:
    """True when the lab of the state folder `root` (on `network`) removes the container at
    `lab down`: its own, one whose owner folder is gone, or an unowned one on its network."""
    if container.owner == str(root) or container.abandoned():
        return True
    return container.owner is None and network is not None and container.network == network


def in_the_way(containers: Iterable[Container], root: Path, network: str) -> list[str]:
    """The containers a new lab of `root` on `network` would clash with: its folder's (a lab.json
    lost), abandoned ones, and any on that network (another lab of the same kind)."""
    return [c.name for c in containers if c.owner == str(root) or c.abandoned() or c.network == network]


def inventory_owned(path: Path, root: Path) -> bool:
    """True when the generated inventory at `path` is the lab's of `root` (its SSH key lies there)
    or a lab's whose folder is gone; False when there is none or it cannot be read."""
    try:
        key = yaml.safe_load(path.read_text())["all"]["vars"]["ansible_ssh_private_key_file"]
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return False
    folder = Path(str(key)).parent
    return folder == root or not folder.is_dir()
