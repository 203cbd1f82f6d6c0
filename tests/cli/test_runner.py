"""gpurack run through real ansible-runner against localhost (connection local) and a dead port."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_helpers import invoke
from gpurack import runner
from gpurack.errors import ExitCode, UsageError
from gpurack.runner import RunRequest, TaskEvent

PLAYBOOK = """\
- name: Tiny play
  hosts: "{{ target | default('nodes') }}"
  gather_facts: false
  tasks:
    - name: Say hello
      ansible.builtin.debug:
        msg: hello
    - name: Touch a marker
      ansible.builtin.command: "true"
      changed_when: true
    - name: Fail where asked
      ansible.builtin.fail:
        msg: asked to fail
      when: fail_here | default(false) | bool
"""

LOCAL = 'ansible_connection: local, ansible_python_interpreter: "{{ ansible_playbook_python }}"'
INVENTORY = f"""\
all:
  children:
    nodes:
      hosts:
        good: {{{LOCAL}}}
        bad: {{{LOCAL}, fail_here: true}}
    dark:
      hosts:
        gone: {{ansible_host: 127.0.0.1, ansible_port: 1, ansible_connection: ssh, ansible_ssh_timeout: 3}}
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with playbooks/tiny.yml, an inventory and its own state folder."""
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "playbooks/tiny.yml").write_text(PLAYBOOK)
    (tmp_path / "hosts.yml").write_text(INVENTORY)
    (tmp_path / "ansible.cfg").write_text(
        "[defaults]\nhost_key_checking = False\nretry_files_enabled = False\n"
    )
    monkeypatch.setenv("GPURACK_PROJECT", str(tmp_path))
    monkeypatch.setenv("GPURACK_STATE_DIR", str(tmp_path / "state"))
    return tmp_path


def _request(site: Path, **kwargs: object) -> RunRequest:
    return RunRequest(playbook=site / "playbooks/tiny.yml", inventory=site / "hosts.yml", **kwargs)  # type: ignore[arg-type]


def test_run_playbook_ok_host_exits_0_with_stats(site: Path) -> None:
    events: list[TaskEvent] = []
    result = runner.run_playbook(_request(site, limit="good"), site / "runs", events.append)
    assert result.exit_code == ExitCode.OK
    assert result.status == "successful"
    assert [(h.host, h.ok, h.changed, h.failed) for h in result.hosts] == [("good", 2, 1, 0)]
    assert result.artifact_dir.parent == site / "runs"
    kinds = [(e.kind, e.task) for e in events if e.host in (None, "good")]
    assert ("play", "Tiny play") in kinds
    assert ("task", "Say hello") in kinds
    assert ("changed", "Touch a marker") in kinds
    assert ("skipped", "Fail where asked") in kinds


def test_run_playbook_failed_host_exits_1(site: Path) -> None:
    events: list[TaskEvent] = []
    result = runner.run_playbook(_request(site), site / "runs", events.append)
    assert result.exit_code == ExitCode.FAILED
    assert result.failed == ("bad",)
    assert TaskEvent("failed", "Fail where asked", "bad", "asked to fail") in events


def test_run_playbook_unreachable_host_exits_2(site: Path) -> None:
    result = runner.run_playbook(_request(site, extravars={"target": "dark"}), site / "runs")
    assert result.exit_code == ExitCode.NOT_ASSESSED
    assert result.unreachable == ("gone",)


def test_run_playbook_pattern_matching_nothing_raises_usage_error(site: Path) -> None:
    with pytest.raises(UsageError, match="matched no inventory hosts"):
        runner.run_playbook(_request(site, extravars={"target": "nobody"}), site / "runs")


def test_run_playbook_check_mode_changes_nothing(site: Path) -> None:
    result = runner.run_playbook(_request(site, limit="good", check=True, diff=True), site / "runs")
    assert result.exit_code == ExitCode.OK
    assert [h.changed for h in result.hosts] == [0]  # command tasks are skipped in check mode


def test_run_cli_bare_name_resolves_under_playbooks(capsys: pytest.CaptureFixture[str], site: Path) -> None:
    result = invoke(capsys, "run", "tiny", "-i", site / "hosts.yml", "--limit", "good")
    assert result.code == 0, result.err
    assert "Say hello" in result.out
    assert "good" in result.out
    assert any((site / "state/runs").iterdir())


def test_run_cli_failed_host_exits_1_with_recap(capsys: pytest.CaptureFixture[str], site: Path) -> None:
    result = invoke(capsys, "run", "tiny", "-i", site / "hosts.yml")
    assert result.code == 1
    assert "asked to fail" in result.out
    assert "recap" in result.out


def test_run_cli_unreachable_exits_2_json(capsys: pytest.CaptureFixture[str], site: Path) -> None:
    result = invoke(capsys, "run", "tiny", "-i", site / "hosts.yml", "-e", "target=dark", "--json")
    assert result.code == 2
    data = json.loads(result.out)
    assert data["unreachable"] == ["gone"]
    assert data["exit_code"] == 2


def test_run_cli_no_matching_hosts_exits_64(capsys: pytest.CaptureFixture[str], site: Path) -> None:
    result = invoke(capsys, "run", "tiny", "-i", site / "hosts.yml", "-e", "target=nobody")
    assert result.code == 64
    assert "hosts pattern matched no inventory hosts" in result.err


def test_run_cli_limit_matching_nothing_exits_64(capsys: pytest.CaptureFixture[str], site: Path) -> None:
    result = invoke(capsys, "run", "tiny", "-i", site / "hosts.yml", "--limit", "nobody")
    assert result.code == 64
    assert len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing-playbook", "-i", "hosts.yml"], "playbook not found"),
        (["tiny", "-i", "missing.yml"], "inventory not found"),
        (["tiny", "-i", "hosts.yml", "-e", "novalue"], "expected key=value"),
    ],
)
def test_run_cli_bad_arguments_exit_64_before_running(
    capsys: pytest.CaptureFixture[str],
    site: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(site)
    result = invoke(capsys, "run", *args)
    assert result.code == 64
    assert message in result.err
    assert not (site / "state/runs").exists()


def test_to_task_event_ignores_other_events() -> None:
    assert runner.to_task_event({"event": "verbose", "event_data": {}}) is None


def test_extravars_take_pairs_files_and_inline_mappings(tmp_path: Path) -> None:
    pool = tmp_path / "pool.yml"
    pool.write_text("gpurack_pool:\n  name: a\n  labels: {team: vision}\n")
    merged = runner.parse_extravars(
        ["target=dark", f"@{pool}", '{"gpurack_expect": {"gpu": {"count": 2}}}', "target=light"]
    )
    assert merged == {
        "target": "light",
        "gpurack_pool": {"name": "a", "labels": {"team": "vision"}},
        "gpurack_expect": {"gpu": {"count": 2}},
    }


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("@/nonexistent/vars.yml", "cannot read the file"),
        ("{not: [closed", "not valid YAML or JSON"),
        ("{}{}", "not valid YAML or JSON"),
        ("novalue", "expected key=value, @FILE or a YAML/JSON mapping"),
    ],
)
def test_extravars_bad_values_are_usage_errors(value: str, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        runner.parse_extravars([value])


def test_extravars_file_must_hold_a_mapping(tmp_path: Path) -> None:
    listing = tmp_path / "list.yml"
    listing.write_text("- a\n- b\n")
    with pytest.raises(UsageError, match="expected a mapping"):
        runner.parse_extravars([f"@{listing}"])
