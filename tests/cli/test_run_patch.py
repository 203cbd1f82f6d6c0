"""`gpurack run patch` through real ansible-runner, against a stand-in for playbooks/patch.yml on
localhost: the extra vars reach the play as the strings AWX sends, each host's last
`gpurack_patch` fact is shown after the recap, kept with the run, and `gpurack report` shows it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import invoke

# Only the contract the driver reads: a `gpurack_patch` set_fact in each host's `always:`, set
# once before (a retry's outcome, replaced by the last one), with values templated as text.
PATCH_PLAYBOOK = """\
- name: Patch stand-in
  hosts: nodes
  gather_facts: false
  tasks:
    - name: Patch one node
      block:
        - name: Extra vars arrive as they were given, strings
          ansible.builtin.assert:
            that:
              - node_update_allow_reboot is string
              - node_update_allow_reboot == 'true'
              - node_maintenance_serial is string
              - node_maintenance_serial == '1'
        - name: Record a first try
          ansible.builtin.set_fact:
            gpurack_patch: {outcome: refused, reason: first try, node: x, drain_s: null, update_s: null,
                            reboot_s: null, validation_s: null, kernel_before: "", kernel_after: "",
                            driver_before: "", driver_after: "", rebooted: false, validation: "", run: ""}
        - name: Fail the update where asked
          ansible.builtin.fail:
            msg: update failed
          when: fail_here | default(false) | bool
        - name: Note the node was patched
          ansible.builtin.set_fact:
            __patch_outcome: patched
      rescue:
        - name: Note the node is held
          ansible.builtin.set_fact:
            __patch_outcome: held
      always:
        - name: Record the outcome
          ansible.builtin.set_fact:
            gpurack_patch:
              outcome: "{{ __patch_outcome }}"
              reason: "{{ '' if __patch_outcome == 'patched' else 'update failed' }}"
              node: "lab-{{ inventory_hostname }}"
              drain_s: "12.3"
              update_s: "{{ 40.1 }}"
              reboot_s: "{{ 35.0 if __patch_outcome == 'patched' else None }}"
              validation_s: "{{ 20.2 if __patch_outcome == 'patched' else None }}"
              kernel_before: "6.1.0-41-amd64"
              kernel_after: "{{ '6.1.0-42-amd64' if __patch_outcome == 'patched' else '6.1.0-41-amd64' }}"
              driver_before: "580.95.05"
              driver_after: "{{ '580.105.08' if __patch_outcome == 'patched' else '580.95.05' }}"
              rebooted: "{{ node_update_allow_reboot if __patch_outcome == 'patched' else 'False' }}"
              validation: "{{ 'pass' if __patch_outcome == 'patched' else '' }}"
              run: "awx-1234"
"""

LOCAL = 'ansible_connection: local, ansible_python_interpreter: "{{ ansible_playbook_python }}"'
INVENTORY = f"""\
all:
  children:
    nodes:
      hosts:
        good: {{{LOCAL}}}
        bad: {{{LOCAL}, fail_here: true}}
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with playbooks/patch.yml and an inventory of two local hosts."""
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks/patch.yml").write_text(PATCH_PLAYBOOK)
    (tmp_path / "hosts.yml").write_text(INVENTORY)
    (tmp_path / "ansible.cfg").write_text("[defaults]\nretry_files_enabled = False\n")
    monkeypatch.setenv("GPURACK_PROJECT", str(tmp_path))
    return tmp_path


def test_run_patch_passes_string_extra_vars_shows_and_records_each_nodes_outcome(
    capsys: pytest.CaptureFixture[str], site: Path
) -> None:
    result = invoke(
        capsys, "run", "patch", "-i", site / "hosts.yml",
        "-e", "node_update_allow_reboot=true", "-e", "node_maintenance_serial=1",
    )  # fmt: skip
    assert result.code == 0, result.out + result.err
    recap, table = result.out.split("\npatch", 1)
    assert "recap" in recap
    assert "good (lab-good)" in table and "patched" in table and "update failed" in table
    assert "6.1.0-41-amd64 → 6.1.0-42-amd64" in table

    report = invoke(capsys, "report", "latest", "--output", site / "r", "--format", "json,md")
    assert report.code == 0, report.err
    doc = json.loads((site / "r" / "report.json").read_text())
    assert doc["run"]["playbook"] == "patch.yml"
    totals = doc["patch"]["totals"]
    assert (totals["nodes"], totals["held"], totals["patched"]) == (2, 1, 1)
    held, patched = doc["patch"]["nodes"]
    assert (held["host"], held["outcome"], held["reason"], held["rebooted"]) == (
        "bad",
        "held",
        "update failed",
        False,
    )
    assert (held["reboot_s"], held["validation"], held["driver_after"]) == (None, None, "580.95.05")
    assert (patched["host"], patched["node"], patched["outcome"], patched["reason"]) == (
        "good",
        "lab-good",
        "patched",
        None,
    )
    assert (patched["drain_s"], patched["update_s"], patched["reboot_s"], patched["validation_s"]) == (
        12.3,
        40.1,
        35.0,
        20.2,
    )
    assert (patched["rebooted"], patched["validation"], patched["maintenance_run"]) == (
        True,
        "pass",
        "awx-1234",
    )
    md = (site / "r" / "report.md").read_text()
    assert "| good (lab-good) | PATCHED | — | 12.3 s | 40.1 s | 35 s | 20.2 s |" in md


def test_run_patch_json_output_is_unchanged_by_the_outcomes(
    capsys: pytest.CaptureFixture[str], site: Path
) -> None:
    result = invoke(
        capsys, "run", "patch", "-i", site / "hosts.yml", "--json",
        "-e", "node_update_allow_reboot=true", "-e", "node_maintenance_serial=1",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert json.loads(result.out)["status"] == "successful"  # one JSON document, no table after it
