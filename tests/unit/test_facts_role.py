"""roles/facts: the one "gather when not set" for every phase, run here with -c local on the H200 capture.

Two roles' worth of includes in one play read each source once, check mode reads the same,
nothing reports a change, and a failing module is recorded instead of failing the host when
asked. Every role's <role>_facts_root defaults to the site-wide gpurack_facts_root.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import H200X1

REPO = Path(__file__).resolve().parents[2]

PLAY = """
- name: Two phases that need facts
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Like nvidia_driver
      ansible.builtin.include_role:
        name: gpurack.bootstrap.facts
      vars:
        facts_sources: [gpu, os]
    - name: Like node_labels
      ansible.builtin.include_role:
        name: gpurack.bootstrap.facts
      vars:
        facts_sources: [gpu, nic]
    - name: Like nvidia_driver again
      ansible.builtin.include_role:
        name: gpurack.bootstrap.facts
      vars:
        facts_sources: [gpu, os]
    - name: Show what was read
      ansible.builtin.debug:
        msg: "FACTS {{ {'gpus': gpurack_gpu.count, 'nic': gpurack_nic.available, 'os': gpurack_os.available,
                        'nvme': gpurack_nvme is defined, 'errors': facts_errors} | to_json }}"
"""


def _play(tmp_path: Path, *extra: str, play: str = PLAY) -> subprocess.CompletedProcess[str]:
    (tmp_path / "play.yml").write_text(play)
    playbook = str(Path(sys.executable).parent / "ansible-playbook")
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    env["ANSIBLE_CALLBACK_RESULT_FORMAT"] = "json"  # one line per debug message
    cmd = [playbook, "-c", "local", "-i", "localhost,", "-e", f"ansible_python_interpreter={sys.executable}"]
    cmd += ["-e", f"gpurack_facts_root={H200X1}", *extra]
    return subprocess.run(
        [*cmd, str(tmp_path / "play.yml")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _runs(out: str, task: str) -> list[str]:
    """The per-host status lines ('ok', 'skipping', ...) of every run of a facts role task."""
    blocks = re.split(r"^TASK \[", out, flags=re.MULTILINE)
    return [
        block.splitlines()[1].split(":")[0]
        for block in blocks
        if block.startswith(f"gpurack.bootstrap.facts : {task}]")
    ]


def _shown(out: str) -> dict[str, object]:
    line = next(ln for ln in out.splitlines() if "FACTS " in ln)
    shown: dict[str, object] = json.loads(
        json.loads('"' + line.split("FACTS ", 1)[1].rstrip().rstrip('"') + '"')
    )
    return shown


@pytest.mark.parametrize("mode", [[], ["--check"]], ids=["run", "check"])
def test_facts_role_reads_each_source_once_per_play_without_changes(tmp_path: Path, mode: list[str]) -> None:
    # A fact the inventory sets is never read from the node.
    proc = _play(tmp_path, "-e", '{"gpurack_os": {"available": "from inventory"}}', *mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # One module run per include that still lacks a source; an include with all set is one skip.
    assert _runs(proc.stdout, "Gather the facts not set yet") == ["included", "included", "skipping"]
    assert _runs(proc.stdout, "Gather the hardware facts") == ["ok", "ok"]
    shown = {"gpus": 1, "nic": True, "os": "from inventory", "nvme": False, "errors": {}}
    assert _shown(proc.stdout) == shown
    assert re.search(r"localhost\s+: ok=\d+\s+changed=0\s", proc.stdout)


def test_facts_role_refresh_reads_again_and_records_a_failing_module(tmp_path: Path) -> None:
    broken = tmp_path / "h200x1"
    shutil.copytree(H200X1, broken, copy_function=shutil.copyfile)
    (broken / "nvme-list.json").write_text("# $ nvme list -o json\n{not json\n# rc=0\n")
    play = PLAY.replace(
        "facts_sources: [gpu, nic]",
        "facts_sources: [gpu, nvme]\n        facts_refresh: true\n        facts_fail_on_error: false",
    )
    proc = _play(
        tmp_path, "-e", f"gpurack_facts_root={broken}", play=play.replace("gpurack_nic.available", "0")
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _runs(proc.stdout, "Gather the hardware facts") == ["ok", "ok"]
    errors = _shown(proc.stdout)["errors"]
    assert isinstance(errors, dict) and list(errors) == ["gpurack_nvme"]
    assert "invalid JSON" in errors["gpurack_nvme"]["msg"]


def test_facts_role_fails_the_host_on_a_failing_module_by_default(tmp_path: Path) -> None:
    broken = tmp_path / "h200x1"
    shutil.copytree(H200X1, broken, copy_function=shutil.copyfile)
    (broken / "nvme-list.json").write_text("# $ nvme list -o json\n{not json\n# rc=0\n")
    play = PLAY.replace("facts_sources: [gpu, nic]", "facts_sources: [nvme]")
    proc = _play(tmp_path, "-e", f"gpurack_facts_root={broken}", play=play)
    assert proc.returncode != 0
    assert "invalid JSON" in proc.stdout


def test_every_facts_root_defaults_to_gpurack_facts_root() -> None:
    roots = {}
    for defaults in sorted(REPO.glob("roles/*/defaults/main.yml")):
        data = yaml.safe_load(defaults.read_text()) or {}
        roots.update({k: v for k, v in data.items() if k.endswith("facts_root")})
    assert {"facts_root", "kubeadm_join_facts_root", "preflight_facts_root"} <= set(roots)
    assert set(roots.values()) == {"{{ gpurack_facts_root | default('/') }}"}


def test_lab_inventory_sets_the_facts_root_once() -> None:
    settings = [
        key
        for path in sorted((REPO / "lab/inventory").rglob("*.yml"))
        for key in (yaml.safe_load(path.read_text()) or {})
        if key.endswith("facts_root")
    ]
    assert settings == ["gpurack_facts_root"]
