"""The offline Kubernetes build's cache key depends on what is built, not on where the recipe lives."""

from __future__ import annotations

import os
import re
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


@pytest.mark.parametrize(
    ("variable", "wrapper"),
    [
        ("PROMETHEUS_ADAPTER_VERSION", "prometheus-adapter"),
        ("KWOK_VERSION", "kwok"),
        ("DRA_EXAMPLE_DRIVER_VERSION", "dra-example-driver"),
    ],
)
def test_a_stamped_components_inputs_never_move_the_cache(
    tmp_path: Path, variable: str, wrapper: str
) -> None:
    """prometheus-adapter, kwok and dra-example-driver (like versitygw) are stamped on their own version
    and wrapper module: a bump rebuilds that one alone, never the rest (a new <hash> is a cold build of
    everything)."""
    moved = tmp_path / "k8s-build"
    shutil.copytree(BUILD, moved)
    versions = moved / "versions.env"
    text = versions.read_text()
    bumped = re.sub(rf"^{variable}=.*$", f"{variable}=v9.9.9", text, flags=re.M)
    assert bumped != text
    versions.write_text(bumped)
    (moved / wrapper / "go.mod").write_text(f"module gpurack.lab/k8s-build/{wrapper}\n")
    assert _print_dir(moved) == _print_dir(BUILD)
    # A version of the recipe's components does move it.
    versions.write_text(re.sub(r"^KUEUE_VERSION=.*$", "KUEUE_VERSION=v9.9.9", text, flags=re.M))
    assert _print_dir(moved) != _print_dir(BUILD)
