"""roles/observability in check mode on this machine (-c local): it reports, and changes nothing.

The Prometheus half needs a cluster (the lab verifies it); its scrape config is covered by the
filter's tests (tests/unit/plugins/filter/test_observability.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYTHON = "/usr/bin/python3"


def _has_python_apt() -> bool:
    try:
        return subprocess.run([PYTHON, "-c", "import apt"], capture_output=True, check=False).returncode == 0
    except OSError:
        return False


@pytest.mark.skipif(not _has_python_apt(), reason="needs Debian's python3-apt (package_facts)")
def test_check_mode_reports_the_node_exporter_and_changes_nothing(tmp_path: Path) -> None:
    play = tmp_path / "play.yml"
    play.write_text(
        "- hosts: all\n  gather_facts: false\n  roles:\n    - role: gpurack.bootstrap.observability\n"
    )
    textfile = tmp_path / "textfile"
    extra = {
        "observability_node_exporter_hosts": ["localhost"],
        "observability_node_exporter_textfile_dir": str(textfile),
        "ansible_python_interpreter": PYTHON,
    }
    cmd = [
        str(Path(sys.executable).parent / "ansible-playbook"),
        *("-C", "--diff", "-c", "local", "-i", "localhost,", "-e", json.dumps(extra), str(play)),
    ]
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert f'+ARGS="--collector.textfile.directory={textfile} --web.listen-address=:9100"' in proc.stdout
    assert not textfile.exists()
    if not Path("/usr/bin/prometheus-node-exporter").exists():
        # The package would be installed; its unit and its restart are not asked about.
        assert "Install the missing packages with apt" in proc.stdout
        assert "failed=0" in proc.stdout
