"""Helpers shared by the lab's end-to-end tests."""

from __future__ import annotations

import os
import shutil

from gpurack.lab import docker


def docker_unusable() -> str | None:
    """Why Docker cannot run here at all, or None when `lab up` can use or start it."""
    if docker.engine_ready():
        return None
    if os.geteuid() != 0:
        return "no Docker daemon answers and starting one needs root"
    if shutil.which("dockerd") is None and shutil.which("apt-get") is None:
        return "no dockerd and no apt-get to install docker.io"
    return None
