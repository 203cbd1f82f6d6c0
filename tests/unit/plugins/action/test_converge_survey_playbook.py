"""converge_stamp's survey in real ansible-playbook runs: in a play of gated roles the first
check reads the host and the next is answered from that reading, unless a task in between
changed the host, or the host_changes callback that counts such tasks is not enabled."""

from __future__ import annotations

from pathlib import Path

import pytest
from playbook_runs import run_local_playbook

GATED = """
- name: Check the {role} stamp
  gpurack.bootstrap.converge_stamp:
    name: {role}
    stamp_dir: "{{{{ stamp_dir }}}}"
    inputs: {{vars: {{key: 1}}, when: "{{{{ '2026-12-06' }}}}"}}
    probe: {{paths: ["{{{{ stamp_dir }}}}/../managed-{role}"]}}
    state: "{{{{ stamp_state | default('checked') }}}}"
"""
PLAYBOOK = """
- name: Converge
  hosts: localhost
  gather_facts: false
  roles: [first, second]
  vars: {stamp_state: recorded}
- name: Re-run
  hosts: localhost
  gather_facts: false
  roles: [first, second]
- name: Re-run with a change between the roles
  hosts: localhost
  gather_facts: false
  roles: [first, touch, second]
"""


def _checked_by(tmp_path: Path, callbacks: str) -> list[str]:
    """How each play's check of the second role was answered (host or survey)."""
    for role, tasks in {
        "first": GATED.format(role="first"),
        "second": GATED.format(role="second"),
        "touch": '- name: Change the host\n  ansible.builtin.command: "true"\n',
    }.items():
        (tmp_path / "roles" / role / "tasks").mkdir(parents=True)
        (tmp_path / "roles" / role / "tasks" / "main.yml").write_text(tasks)
    for role in ("first", "second"):
        (tmp_path / f"managed-{role}").write_text(role)
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    stamps = f"stamp_dir={tmp_path / 'stamps'}"
    report = run_local_playbook(
        tmp_path, callbacks, {"ANSIBLE_ROLES_PATH": str(tmp_path / "roles")}, ("-e", stamps)
    )
    answers = []
    for play in report["plays"][1:]:
        second = [task for task in play["tasks"] if task["task"]["name"].endswith("Check the second stamp")]
        result = second[0]["hosts"]["localhost"]
        assert result["holds"] is True, result
        answers.append(result["checked_by"])
    return answers


@pytest.mark.parametrize(
    ("callbacks", "expected"),
    [
        ("gpurack.bootstrap.plugin_preload,gpurack.bootstrap.host_changes", ["survey", "host"]),
        ("gpurack.bootstrap.plugin_preload", ["host", "host"]),
    ],
    ids=["counted", "not-counted"],
)
def test_a_check_is_answered_from_the_survey_only_while_nothing_touched_the_host(
    tmp_path: Path, callbacks: str, expected: list[str]
) -> None:
    assert _checked_by(tmp_path, callbacks) == expected
