"""Where the lab's files are: the lab/ folder of the gpurack checkout the command runs in.

The lab is a development tool: it runs from a checkout (found from the working directory
or $GPURACK_PROJECT, as the driver finds it) and never from an installed collection.
"""

from __future__ import annotations

from pathlib import Path

from gpurack.project import project_root

FOLDER = "lab"


def lab_root() -> Path:
    """<checkout>/lab.

    Raises:
        UsageError: not inside a checkout.
    """
    return project_root() / FOLDER


def inventory_dir() -> Path:
    """lab/inventory: static group_vars (committed) and the generated hosts.yml."""
    return lab_root() / "inventory"


def playbook(name: str) -> Path:
    """A lab playbook, lab/playbooks/<name>.yml (lab_kubernetes)."""
    return lab_root() / "playbooks" / f"{name}.yml"


def node_image_script() -> Path:
    """lab/images/build-node-image.sh: the node image the lab (and Molecule) run."""
    return lab_root() / "images" / "build-node-image.sh"
