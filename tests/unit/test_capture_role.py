"""roles/capture: the role holds no copy of the capture list and writes what `gpurack capture` writes.

playbooks/capture.yml runs here with -c local (no GPU needed): the bundle holds exactly the
files of module_utils/facts/capture.py's CAPTURE_COMMANDS and CAPTURE_FILES, in the capture
format, and a sysfs mirror made by the one mirror (module_utils/facts/sysfs.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    CAPTURE_COMMANDS,
    CAPTURE_FILES,
    CAPTURE_SYSFS_GLOBS,
    parse_capture_file,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.sysfs import (
    PCI_CLASS_PREFIXES,
    PCI_VENDORS,
)

REPO = Path(__file__).resolve().parents[2]
ROLE = REPO / "roles" / "capture"


def _capture(dest: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    playbook = str(Path(sys.executable).parent / "ansible-playbook")
    cmd = [
        playbook,
        "-c",
        "local",
        "-i",
        "localhost,",
        "-e",
        "gpurack_hosts=localhost",
        "-e",
        f"capture_dest={dest}",
    ]
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    return subprocess.run(
        [*cmd, *extra, "playbooks/capture.yml"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("captures")
    proc = _capture(dest)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return dest / "localhost"


def test_role_holds_no_copy_of_the_capture_list() -> None:
    texts = "\n".join(p.read_text() for p in ROLE.rglob("*") if p.is_file())
    for cmd in CAPTURE_COMMANDS:
        assert cmd.filename not in texts
    for pattern in CAPTURE_SYSFS_GLOBS:
        assert pattern not in texts


def test_commands_equal_capture_commands(bundle: Path) -> None:
    listed = sorted(p.name for p in bundle.iterdir() if p.is_file())
    assert listed == sorted([c.filename for c in CAPTURE_COMMANDS] + list(CAPTURE_FILES))
    for cmd in CAPTURE_COMMANDS:
        command_line, output = parse_capture_file((bundle / cmd.filename).read_text(), name=cmd.filename)
        assert command_line == " ".join(cmd.argv)
        assert isinstance(output.rc, int)


def test_files_equal_capture_files(bundle: Path) -> None:
    assert (bundle / "os-release").read_bytes() == Path("/etc/os-release").read_bytes()


def test_sysfs_mirror_is_the_shared_one(bundle: Path) -> None:
    assert (bundle / "sys/devices/system/node/node0/cpulist").is_file()
    assert not any(p.is_symlink() for p in (bundle / "sys").rglob("*"))
    assert not (bundle / "bundle.tar.gz").exists()
    for device in (bundle / "sys/bus/pci/devices").glob("*"):
        vendor = (device / "vendor").read_text().strip()
        assert vendor in PCI_VENDORS or (device / "class").read_text().startswith(PCI_CLASS_PREFIXES)


def test_check_mode_writes_nothing(tmp_path: Path) -> None:
    proc = _capture(tmp_path, "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "failed=0" in proc.stdout
    assert list(tmp_path.iterdir()) == []
