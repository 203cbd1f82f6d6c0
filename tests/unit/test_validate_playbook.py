"""playbooks/validate.yml on a replayed H200 capture (-c local), without a cluster.

With validation_update_node false the role runs the quick checks, sets validation_result
and fails the hosts that did not pass; the Node side is covered by the module's tests and
the lab's Kubernetes end-to-end test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import FIXTURES

REPO = Path(__file__).resolve().parents[2]
H200 = FIXTURES / "hw" / "h200x1"


def _validate(expect: dict[str, Any], **more: Any) -> subprocess.CompletedProcess[str]:
    extra = {
        "gpurack_hosts": "localhost",
        "gpurack_facts_root": str(H200),
        "validation_update_node": False,
        "gpurack_expect": expect,
        **more,
    }
    cmd = [
        str(Path(sys.executable).parent / "ansible-playbook"),
        *("-v", "-c", "local", "-i", "localhost,", "-e", json.dumps(extra), "playbooks/validate.yml"),
    ]
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=240, check=False)


def test_a_node_that_meets_its_expectations_passes() -> None:
    proc = _validate({"gpu": {"count": 1, "model": "NVIDIA H200"}})
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "verdict: pass" in proc.stdout


def test_a_failing_node_gets_a_reason_and_fails_last() -> None:
    proc = _validate({"gpu": {"count": 2}})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "Traceback" not in out
    assert "reason: 'gpu.count: 1 GPUs found, expected 2'" in out
    assert "verdict: fail" in out
    assert out.index("verdict: fail") < out.index("preflight FAIL on localhost")


def test_a_failing_node_writes_its_verdicts_as_textfile_metrics(tmp_path: Path) -> None:
    proc = _validate({"gpu": {"count": 2}}, validation_textfile_dir=str(tmp_path))
    assert proc.returncode != 0
    text = (tmp_path / "gpurack.prom").read_text()
    assert 'gpurack_node_validated{node="localhost",pool=""} 0' in text
    assert (
        'gpurack_check_verdict{node="localhost",pool="",check="gpu.count",component="node",verdict="fail"} 1'
        in text
    )
    assert 'gpurack_check_measured{node="localhost",pool="",check="gpu.count",component="node"} 1' in text
