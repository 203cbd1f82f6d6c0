"""The offline Kubernetes build's cache key depends on what is built, not on where the recipe lives."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

BUILD = Path(__file__).resolve().parents[1] / "k8s-build"


def _print_dir(folder: Path) -> str:
    env = {**os.environ, "PATH": f"/usr/local/go/bin:{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [str(folder / "build.sh"), "--print-dir"], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode == 64:
        pytest.skip(f"build.sh cannot run here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_cache_dir_is_the_same_from_another_folder(tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere" / "k8s-build"
    shutil.copytree(BUILD, moved)
    assert _print_dir(moved) == _print_dir(BUILD)
