"""Role inputs with limits the argument spec cannot express (ranges, lengths), refused first.

Each role runs on this machine (-c local) with one bad value: the role's first task fails
naming the variable and the limit, before anything is installed, probed or joined.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
POOL = {"name": "h200-inference", "workload": "inference", "sharing": "full-gpu"}
PLAYBOOK = """\
- name: One role
  hosts: localhost
  gather_facts: false
  roles:
    - role: gpurack.bootstrap.{role}
"""


def _run(tmp_path: Path, role: str, extra: dict[str, object]) -> subprocess.CompletedProcess[str]:
    playbook = tmp_path / f"{role}.yml"
    playbook.write_text(PLAYBOOK.format(role=role))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-c", "local", "-i", "localhost,"]
    cmd += ["-e", f"ansible_python_interpreter={sys.executable}", "-e", json.dumps(extra), str(playbook)]
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=180, check=False)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"nvme_scratch_md_chunk_kib": -512}, "power of two from 4 to 1048576 (KiB), got -512"),
        ({"nvme_scratch_md_chunk_kib": 0}, "got 0"),
        ({"nvme_scratch_md_chunk_kib": 500}, "got 500"),
        ({"nvme_scratch_md_chunk_kib": 2097152}, "got 2097152"),
        ({"nvme_scratch_fs_label": "gpurack-scratch-fs1"}, '"gpurack-scratch-fs1" (19)'),
        ({"nvme_scratch_fs_label": "a -f"}, '"a -f" (4)'),
        ({"nvme_scratch_md_name": "m" * 33}, f'"{"m" * 33}" (33)'),
    ],
)
def test_nvme_scratch_refuses_what_mdadm_and_xfs_cannot_take(
    tmp_path: Path, extra: dict[str, object], message: str
) -> None:
    proc = _run(tmp_path, "nvme_scratch", extra)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "Refuse chunk sizes, names and labels" in out
    assert message in out
    assert "Traceback" not in out
    assert "Check the platform" not in out  # nothing installed or probed


@pytest.mark.parametrize("ttl", [0, -5, 121, "0"])
def test_kubeadm_join_refuses_a_token_ttl_outside_1_to_120(tmp_path: Path, ttl: object) -> None:
    proc = _run(tmp_path, "kubeadm_join", {"kubeadm_join_token_ttl_minutes": ttl, "gpurack_pool": POOL})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "kubeadm_join_token_ttl_minutes must be 1 to 120 (minutes; kubeadm reads 0 as never" in out
    assert f"got {ttl}" in out
    assert "Traceback" not in out
    assert "Derive labels and taints" not in out


@pytest.mark.parametrize("role", ["kubeadm_join", "node_labels"])
def test_labelling_roles_refuse_a_bad_pool_before_reading_facts(tmp_path: Path, role: str) -> None:
    """join.yml can run without preflight: the roles that label check the pool again, by the same rules."""
    pool = {**POOL, "wrkload": "batch", "name": "H200 Inference"}
    proc = _run(tmp_path, role, {"gpurack_pool": pool})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert f"{role}_pool (gpurack_pool) of localhost is invalid" in out
    assert "unknown key 'wrkload' (did you mean 'workload'?)" in out
    assert "pool.name: 'H200 Inference' must be a DNS label" in out
    assert "Traceback" not in out
    assert "Gather the GPU and NIC facts" not in out


@pytest.mark.parametrize("mtu", [0, -1, 67, 65521, "90000"])
def test_fabric_refuses_an_mtu_outside_68_to_65520(tmp_path: Path, mtu: object) -> None:
    interfaces = [{"name": "ib0", "mtu": 4092}, {"name": "ib1", "mtu": mtu}]
    proc = _run(tmp_path, "fabric", {"fabric_interfaces": interfaces})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert f"an MTU must be 68 to 65520 (IPoIB connected mode's maximum), got ib0=4092, ib1={mtu}" in out
    assert "Traceback" not in out
    assert "Load platform variables" not in out


def test_fabric_takes_mtus_in_range(tmp_path: Path) -> None:
    interfaces = [{"name": "ib0", "mtu": 68}, {"name": "ib1", "mtu": 65520}, {"name": "eth1"}]
    proc = _run(tmp_path, "fabric", {"fabric_interfaces": interfaces})
    out = proc.stdout + proc.stderr
    assert "an MTU must be" not in out
    assert "Load platform variables" in out  # the role went on (and stops there: no facts here)
