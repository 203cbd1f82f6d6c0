"""kubeadm_join's token lifecycle on this machine, with a stand-in kubeadm that logs its calls.

Three local hosts (one control plane, two workers) run the role's join tasks. The token
the batch used must be deleted in every case: also when the batch's first host was
already joined (issue 13: the run_once delete sat in a block whose condition was read on
that first host, so the token survived), and when a join failed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOKEN = "abcdef.0123456789abcdef"
KUBEADM = f"""\
#!/bin/sh
printf '%s\\n' "$*" >> "$FAKE_KUBEADM_LOG"
case "$1 $2" in
  "token create") echo "{TOKEN}" ;;
  "token delete")
    if [ -e "$FAKE_KUBEADM_LOG.deleted" ]; then echo "bootstrap token \\"$3\\" not found" >&2; exit 1; fi
    touch "$FAKE_KUBEADM_LOG.deleted"; echo "bootstrap token \\"$3\\" deleted" ;;
  "join --config") case "$3" in *"/$FAKE_KUBEADM_FAIL/"*) echo "join failed" >&2; exit 1 ;; esac ;;
esac
exit 0
"""
INVENTORY = """\
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: {python}
  children:
    kube_control_plane: {{hosts: {{cp: {{}}}}}}
    workers: {{hosts: {{w1: {{}}, w2: {{}}}}}}
"""
PLAYBOOK = """\
- name: The join tasks of kubeadm_join
  hosts: workers
  gather_facts: false
  tasks:
    - name: Join the pending hosts
      ansible.builtin.include_role:
        name: gpurack.bootstrap.kubeadm_join
        tasks_from: join
      vars:
        __kubeadm_join_pending: {pending}
        __kubeadm_join_labels: {{gpurack.io/pool: lab}}
        __kubeadm_join_taints: []
        __kubeadm_join_config: "{root}/{{{{ inventory_hostname }}}}/join.yaml"
"""

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the join config is written owned by root")


def _run(
    tmp_path: Path, pending: list[str], fail: str = ""
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubeadm").write_text(KUBEADM)
    # `openssl pkey` reads the key its pipe gives it: a stand-in that did not would end the
    # pipe early, and under pipefail the CA hash task would fail on SIGPIPE (rc 141) at times.
    (bin_dir / "openssl").write_text('#!/bin/sh\n[ "$1" = pkey ] && cat >/dev/null\necho key\n')
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    (tmp_path / "hosts.yml").write_text(INVENTORY.format(python=sys.executable))
    playbook = tmp_path / "join.yml"
    playbook.write_text(PLAYBOOK.format(pending=json.dumps(pending), root=tmp_path / "etc"))
    log = tmp_path / "kubeadm.log"
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_KUBEADM_LOG": str(log),
        "FAKE_KUBEADM_FAIL": fail,
    }
    cmd = [
        str(Path(sys.executable).parent / "ansible-playbook"),
        "-i",
        str(tmp_path / "hosts.yml"),
        str(playbook),
    ]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=180, check=False)
    return proc, log.read_text().splitlines() if log.exists() else []


def _calls(log: list[str], verb: str) -> list[str]:
    return [line for line in log if line.startswith(verb)]


def test_token_is_deleted_when_the_first_host_of_the_batch_is_already_joined(tmp_path: Path) -> None:
    proc, log = _run(tmp_path, pending=["w2"])
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert len(_calls(log, "token create")) == 1, log
    assert "--description=gpurack kubeadm_join w2" in _calls(log, "token create")[0]
    joins = _calls(log, "join --config")
    assert len(joins) == 1 and "/w2/" in joins[0], log
    assert _calls(log, "token delete") == ["token delete --kubeconfig=/etc/kubernetes/admin.conf abcdef"], log
    assert not (tmp_path / "etc/w2/join.yaml").exists()
    assert TOKEN.split(".")[1] not in out  # the secret half never reaches the output


def test_token_is_deleted_once_when_every_host_joins(tmp_path: Path) -> None:
    proc, log = _run(tmp_path, pending=["w1", "w2"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(_calls(log, "join --config")) == 2, log
    assert len(_calls(log, "token delete")) == 1, log


def test_token_is_deleted_and_configs_removed_when_a_join_fails(tmp_path: Path) -> None:
    proc, log = _run(tmp_path, pending=["w1", "w2"], fail="w1")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert len(_calls(log, "join --config")) == 2, log
    assert len(_calls(log, "token delete")) == 1, log
    assert not (tmp_path / "etc/w1/join.yaml").exists()
    assert not (tmp_path / "etc/w2/join.yaml").exists()
    assert TOKEN.split(".")[1] not in out
