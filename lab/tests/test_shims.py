"""The lab shim manifest and the replay script, run as the container would run it (no Docker)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gpurack_lab import profiles, shims

UNAME = "Linux lab-w1 6.1.0-lab #1 SMP PREEMPT_DYNAMIC x86_64 GNU/Linux\n"


@pytest.fixture
def hgx(tmp_path: Path) -> Path:
    return profiles.assemble(profiles.resolve("hgx-h100x8-ib"), tmp_path / "profile", "ID=debian\n", UNAME)


def run_shim(
    tool: str, args: list[str], manifest: dict[str, object], tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest))
    link = tmp_path / "bin" / tool
    link.parent.mkdir(exist_ok=True)
    link.unlink(missing_ok=True)
    link.symlink_to(shims.REPLAY_SCRIPT)
    env = {"GPURACK_LAB_MANIFEST": str(path), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, str(link), *args], capture_output=True, text=True, env=env, check=False
    )


def test_build_manifest_lists_only_recorded_runs(hgx: Path) -> None:
    manifest = shims.build_manifest(hgx, "/opt/gpurack-lab/profile")
    assert manifest["tools"]["nvidia-smi"] == {"-q": "nvidia-smi-q.txt"}
    assert manifest["tools"]["ibstat"] == {"": "ibstat.txt"}
    assert shims.installed_tools(manifest) == ["nvidia-smi", "ibstat", "lspci"]


def test_build_manifest_cpu_only_installs_nothing(tmp_path: Path) -> None:
    folder = profiles.assemble(profiles.resolve("cpu-only"), tmp_path / "p", "ID=debian\n", UNAME)
    assert shims.installed_tools(shims.build_manifest(folder, "/p")) == []


def test_build_manifest_follows_capture_commands(h200x1: Path) -> None:
    manifest = shims.build_manifest(h200x1, "/p")
    assert set(manifest["tools"]["nvidia-smi"]) == {"-q -x", "-q", "topo -m", "nvlink -s", "-L"}


def test_replay_recorded_command_prints_capture_body(hgx: Path, tmp_path: Path) -> None:
    done = run_shim("ibstat", [], shims.build_manifest(hgx, str(hgx)), tmp_path)
    assert done.returncode == 0
    assert done.stdout.startswith("CA 'mlx5_0'")
    assert "# rc=" not in done.stdout


def test_replay_unknown_subcommand_fails_with_clear_stderr(hgx: Path, tmp_path: Path) -> None:
    done = run_shim("nvidia-smi", ["dmon"], shims.build_manifest(hgx, str(hgx)), tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "'nvidia-smi dmon' is not recorded in this lab profile" in done.stderr
    assert "'nvidia-smi -q'" in done.stderr


def test_replay_tool_absent_from_profile_is_not_found(hgx: Path, tmp_path: Path) -> None:
    done = run_shim("nvme", ["list", "-o", "json"], shims.build_manifest(hgx, str(hgx)), tmp_path)
    assert done.returncode == 127
