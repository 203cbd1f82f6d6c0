"""Run one role over many cases in one ansible-playbook call: each case is a local host.

Each host of a generated inventory carries one case's variables (inventory host vars
override role defaults), so one play runs every case side by side, and a case that fails
stops only its own host. The json callback gives every host's task results.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class HostRun:
    """What one case's host did: the names of the tasks it ran, and its failure (if any)."""

    tasks: tuple[str, ...]
    failed_task: str | None
    message: str

    def ran(self, name: str) -> bool:
        """Whether a task whose name contains `name` ran on the host."""
        return any(name in task for task in self.tasks)


def run_cases(
    tmp_path: Path,
    playbook: Path,
    cases: dict[str, dict[str, Any]],
    extra: tuple[str, ...] = (),
    groups: dict[str, list[str]] | None = None,
) -> tuple[dict[str, HostRun], str]:
    """Run `playbook` over one local host per case (members of `groups` by name); each host's run,
    and the raw output."""
    hosts = {
        name: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, **variables}
        for name, variables in cases.items()
    }
    everyone: dict[str, Any] = {"hosts": hosts}
    if groups:
        everyone["children"] = {group: {"hosts": dict.fromkeys(members)} for group, members in groups.items()}
    inventory = tmp_path / "cases.yml"
    inventory.write_text(yaml.safe_dump({"all": everyone}))
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json",
        "ANSIBLE_NOCOLOR": "1",
    }
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory), *extra, str(playbook)]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    out = proc.stdout + proc.stderr
    report = json.loads(proc.stdout[proc.stdout.index("{") :])
    return {name: _host_run(report, name) for name in cases}, out


def _host_run(report: dict[str, Any], host: str) -> HostRun:
    tasks: list[str] = []
    failed: str | None = None
    message = ""
    for play in report["plays"]:
        for task in play["tasks"]:
            result = task["hosts"].get(host)
            if result is None or result.get("skipped"):
                continue
            tasks.append(task["task"]["name"])
            if result.get("failed") and failed is None:
                failed = task["task"]["name"]
                message = (
                    str(result.get("msg", "")) + "\n" + "\n".join(map(str, result.get("argument_errors", [])))
                )
    return HostRun(tuple(tasks), failed, message)


def role_playbook(tmp_path: Path, role: str) -> Path:
    """A playbook that runs one role of the collection on every host."""
    playbook = tmp_path / f"{role}.yml"
    playbook.write_text(
        f"- name: {role}\n  hosts: all\n  gather_facts: false\n"
        f"  roles:\n    - role: gpurack.bootstrap.{role}\n"
    )
    return playbook
