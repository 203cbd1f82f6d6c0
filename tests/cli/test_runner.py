"""gpurack run through real ansible-runner against localhost (connection local) and a dead port."""

from __future__ import annotations

import json
import os
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


def test_extravars_pairs_stay_strings_as_ansible_playbook_keeps_them() -> None:
    # AWX and ansible-playbook pass `-e key=value` as text; the roles cast with `| bool`, `| int`.
    merged = runner.parse_extravars(
        ["node_update_allow_reboot=true", "node_maintenance_serial=1", "empty=", "ratio=0.5", "list=[a]"]
    )
    assert merged == {
        "node_update_allow_reboot": "true",
        "node_maintenance_serial": "1",
        "empty": "",
        "ratio": "0.5",
        "list": "[a]",
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


# -- what a run leaves in its folder ------------------------------------------------------------

SECRET = "hunter2"
ENV_SECRET = "s3cr3t-from-the-environment"


def _holding(folder: Path, needle: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def _assert_private_and_clean(run_dir: Path) -> None:
    """No secret anywhere in the folder, env/ gone, every folder 0700 and every file 0600."""
    assert _holding(run_dir, SECRET) == [] and _holding(run_dir, ENV_SECRET) == []
    assert not (run_dir / "env").exists()
    for path in [run_dir, *run_dir.rglob("*")]:
        assert path.stat().st_mode & 0o777 == (0o700 if path.is_dir() else 0o600), path


@pytest.mark.parametrize(("limit", "code"), [("good", 0), ("bad", 1)])
def test_run_cli_leaves_no_secret_in_its_run_folder(
    capsys: pytest.CaptureFixture[str], site: Path, monkeypatch: pytest.MonkeyPatch, limit: str, code: int
) -> None:
    monkeypatch.setenv("GPURACK_TEST_TOKEN", ENV_SECRET)
    result = invoke(capsys, "run", "tiny", "-i", site / "hosts.yml", "-l", limit, "-e", f"secret={SECRET}")
    assert result.code == code, result.err
    (run_dir,) = (site / "state/runs").iterdir()
    _assert_private_and_clean(run_dir)
    # What the harvest, the recap and the lab read stays.
    (ident,) = (run_dir / "artifacts").iterdir()
    assert {"job_events", "stdout", "status", "rc"} <= {p.name for p in ident.iterdir()}
    assert any((ident / "job_events").glob("*.json"))
    command = json.loads((ident / "command").read_text())
    assert "GPURACK_TEST_TOKEN" in command["env_names"] and "env" not in command


def test_run_playbook_scrubs_its_folder_when_it_stops_early(site: Path) -> None:
    with pytest.raises(UsageError, match="matched no inventory hosts"):
        runner.run_playbook(_request(site, extravars={"target": "nobody", "secret": SECRET}), site / "runs")
    (run_dir,) = (site / "runs").iterdir()
    _assert_private_and_clean(run_dir)


def test_run_playbook_scrubs_its_folder_when_interrupted(site: Path) -> None:
    def interrupt(event: TaskEvent) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        runner.run_playbook(
            _request(site, limit="good", extravars={"secret": SECRET}), site / "runs", interrupt
        )
    (run_dir,) = (site / "runs").iterdir()
    _assert_private_and_clean(run_dir)


def _killed_run(runs_dir: Path, name: str) -> Path:
    """A run folder as a SIGKILLed run leaves it: env/extravars and the environment in command."""
    run_dir = runs_dir / name
    (run_dir / "env").mkdir(parents=True)
    (run_dir / "env/extravars").write_text(json.dumps({"secret": SECRET}))
    ident = run_dir / "artifacts/0f"
    (ident / "job_events").mkdir(parents=True)
    (ident / "command").write_text(json.dumps({"command": ["ansible-playbook"], "env": {"T": ENV_SECRET}}))
    (ident / "stdout").write_text("PLAY [x]\n")
    return run_dir


def test_next_run_scrubs_a_folder_a_killed_run_left(site: Path) -> None:
    stale = _killed_run(site / "runs", "20260101T000000Z")
    runner.run_playbook(_request(site, limit="good"), site / "runs")
    _assert_private_and_clean(stale)
    assert (stale / "artifacts/0f/stdout").read_text() == "PLAY [x]\n"
    assert json.loads((stale / "artifacts/0f/command").read_text())["env_names"] == ["T"]


def test_sweep_leaves_a_running_runs_folder_alone(tmp_path: Path) -> None:
    import fcntl
    import os

    from gpurack import runfolder

    live, dead = _killed_run(tmp_path, "live"), _killed_run(tmp_path, "dead")
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert runfolder.sweep(tmp_path) == [dead]
    finally:
        os.close(fd)
    assert _holding(live, SECRET) and not _holding(dead, SECRET)


def test_scrub_drops_a_command_file_it_cannot_read(tmp_path: Path) -> None:
    from gpurack import runfolder

    run_dir = _killed_run(tmp_path, "cut")
    (run_dir / "artifacts/0f/command").write_text(
        '{"command": ["ansible-playbook"], "env": {"T": "' + ENV_SECRET
    )
    runfolder.scrub(run_dir)
    assert not (run_dir / "artifacts/0f/command").exists()
    _assert_private_and_clean(run_dir)


def test_playbooks_run_with_mitogens_strategy_unless_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANSIBLE_STRATEGY", raising=False)
    monkeypatch.delenv(runner.MITOGEN_ENV, raising=False)
    monkeypatch.setenv("ANSIBLE_STRATEGY_PLUGINS", "/site/strategies")
    env = runner._envvars()
    assert env["ANSIBLE_STRATEGY"] == "mitogen_linear"
    mitogen, site = env["ANSIBLE_STRATEGY_PLUGINS"].split(os.pathsep)
    assert (Path(mitogen) / "mitogen_linear.py").is_file() and site == "/site/strategies"
    monkeypatch.setenv(runner.MITOGEN_ENV, "0")
    assert "ANSIBLE_STRATEGY" not in runner._envvars()
    monkeypatch.delenv(runner.MITOGEN_ENV)
    monkeypatch.setenv("ANSIBLE_STRATEGY", "free")  # the caller's choice stands
    assert "ANSIBLE_STRATEGY" not in runner._envvars()


REPORTING = """\
- name: Write the report
  hosts: good
  gather_facts: false
  tasks:
    - name: Write what the run was given
      ansible.builtin.copy:
        content: "{{ {'fail_on_failure': tiny_fail_on_failure, 'asked': asked} | to_json }}"
        dest: "{{ tiny_report_file }}"
        mode: "0644"
"""


def test_a_reporting_run_writes_its_own_report_file(site: Path) -> None:
    (site / "playbooks/report.yml").write_text(REPORTING)
    request = RunRequest(
        playbook=site / "playbooks/report.yml", inventory=site / "hosts.yml", extravars={"asked": 1}
    )
    runs = site / "state" / "runs"
    first, result = runner.run_reporting(request, runs, "tiny")
    second, _ = runner.run_reporting(request, runs, "tiny")
    assert result.exit_code is ExitCode.OK
    assert first.parent.parent == runs / "tiny" and first != second
    assert json.loads(first.read_text()) == {"fail_on_failure": False, "asked": 1}
    assert json.loads(second.read_text()) == {"fail_on_failure": False, "asked": 1}
