"""Run a playbook through ansible-runner and map its outcome onto exit codes (`gpurack run`, the lab)."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from gpurack import project, runfolder
from gpurack.errors import ExitCode, InterruptedRunError, UsageError

EventKind = Literal["play", "task", "ok", "changed", "failed", "ignored", "unreachable", "skipped"]
Status = Literal["successful", "failed", "timeout", "canceled"]

_HOST_EVENTS: dict[str, EventKind] = {
    "runner_on_ok": "ok",
    "runner_on_failed": "failed",
    "runner_on_unreachable": "unreachable",
    "runner_on_skipped": "skipped",
}


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What to run: a playbook against an inventory, with ansible-playbook's usual options."""

    playbook: Path | str  # a file, or an installed collection's FQCN (gpurack.bootstrap.site)
    inventory: Path
    limit: str | None = None
    check: bool = False
    diff: bool = False
    tags: str | None = None
    extravars: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TaskEvent:
    """One progress event: a play or task starting, or a task's result on one host."""

    kind: EventKind
    task: str
    host: str | None = None
    message: str = ""


@dataclass(frozen=True, slots=True)
class HostStats:
    """Per-host totals from the play recap."""

    host: str
    ok: int
    changed: int
    failed: int
    unreachable: int
    skipped: int


@dataclass(frozen=True, slots=True)
class RunResult:
    """A finished playbook run."""

    status: Status
    rc: int
    exit_code: ExitCode
    hosts: tuple[HostStats, ...]
    failed: tuple[str, ...]
    unreachable: tuple[str, ...]
    artifact_dir: Path


OnEvent = Callable[[TaskEvent], None]


def run_playbook(request: RunRequest, runs_dir: Path, on_event: OnEvent | None = None) -> RunResult:
    """Run the playbook with ansible-runner, artifacts under runs_dir/<timestamp>.

    The folder is scrubbed of secrets however the run ends (`gpurack.runfolder`).

    Raises:
        UsageError: the play targeted no host, or ansible-playbook stopped before any host ran.
        InterruptedRunError: the run was cancelled (Ctrl-C).
    """
    # Imported here: capture, facts and validate must run on nodes that carry no ansible-runner.
    import ansible_runner  # noqa: PLC0415

    with runfolder.new_run_dir(runs_dir) as private_dir:
        runner = ansible_runner.run(
            private_data_dir=str(private_dir),
            playbook=str(request.playbook),
            inventory=str(request.inventory),
            project_dir=_project_dir(),
            envvars=_envvars(),
            limit=request.limit,
            tags=request.tags,
            extravars=dict(request.extravars),
            cmdline=_cmdline(request),
            quiet=True,
            # Not ansible-runner's default, a JSON file per host rewritten each time its facts
            # change, which nothing here reads (harvest reads job events): 2-3 s of a 40 s
            # converged site re-run (docs/performance.md). Ansible's own fact_caching setting,
            # memory unless an ansible.cfg says otherwise, applies instead.
            fact_cache_type="memory",
            event_handler=_event_handler(on_event),
        )
        return _result(runner, private_dir)


def run_reporting(
    request: RunRequest, runs_dir: Path, prefix: str, on_event: OnEvent | None = None
) -> tuple[Path, RunResult]:
    """Run a playbook of tests that writes its results to a file instead of failing on a failed
    test (its role's `<prefix>_report_file` and `<prefix>_fail_on_failure: false`): the file's
    path, to be read back, and the run. A new file per run under runs_dir/<prefix>/, so two runs
    at once never read each other's results.

    Raises:
        UsageError, InterruptedRunError: as run_playbook.
    """
    (runs_dir / prefix).mkdir(parents=True, exist_ok=True)
    folder = tempfile.mkdtemp(prefix=time.strftime("%Y%m%d-%H%M%S-"), dir=runs_dir / prefix)
    report = Path(folder) / "report.json"  # the playbook writes it; one that stops early, none
    extravars = {
        **request.extravars,
        f"{prefix}_report_file": str(report),
        f"{prefix}_fail_on_failure": False,
    }
    run = dataclasses.replace(request, extravars=extravars)
    return report, run_playbook(run, runs_dir, on_event)


def _project_dir() -> str | None:
    """The checkout as ansible-playbook's working folder; None outside one (ansible-runner's own)."""
    root = project.find_checkout()
    return None if root is None else str(root)


def _envvars() -> dict[str, str]:
    """Environment for ansible-playbook: the checkout's ansible.cfg (outside one, Ansible's own
    lookup) and this interpreter's tools first."""
    # The console script may run without the venv activated; ansible-playbook must be the venv's.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {"PATH": path, "ANSIBLE_NOCOLOR": "1", **_strategy()}
    config = project.ansible_config()
    if config is not None:
        env["ANSIBLE_CONFIG"] = str(config)
    return env


MITOGEN_ENV = "GPURACK_MITOGEN"


def _strategy() -> dict[str, str]:
    """Mitogen's linear strategy for ansible-playbook (docs/performance.md: a converged site
    re-run in 80 s instead of 116), unless GPURACK_MITOGEN=0, the caller chose a strategy
    (ANSIBLE_STRATEGY), or mitogen is not installed."""
    if os.environ.get(MITOGEN_ENV, "1") == "0" or os.environ.get("ANSIBLE_STRATEGY"):
        return {}
    spec = importlib.util.find_spec("ansible_mitogen")
    if spec is None or not spec.submodule_search_locations:
        return {}
    plugins = Path(next(iter(spec.submodule_search_locations))) / "plugins" / "strategy"
    others = os.environ.get("ANSIBLE_STRATEGY_PLUGINS")
    return {
        "ANSIBLE_STRATEGY_PLUGINS": os.pathsep.join(filter(None, [str(plugins), others])),
        "ANSIBLE_STRATEGY": "mitogen_linear",
    }


def _cmdline(request: RunRequest) -> str | None:
    """ansible-playbook flags ansible-runner has no parameter for."""
    flags = [flag for flag, on in (("--check", request.check), ("--diff", request.diff)) if on]
    return " ".join(flags) or None


def _event_handler(on_event: OnEvent | None) -> Callable[[dict[str, Any]], bool]:
    """Adapt ansible-runner's raw event dicts to TaskEvents; always keep the event in artifacts."""

    def handle(event: dict[str, Any]) -> bool:
        converted = to_task_event(event)
        if on_event is not None and converted is not None:
            on_event(converted)
        return True

    return handle


def to_task_event(event: Mapping[str, Any]) -> TaskEvent | None:
    """The TaskEvent for a play/task start or a per-host result, None for other events."""
    name = event.get("event", "")
    data = event.get("event_data") or {}
    if name == "playbook_on_play_start":
        return TaskEvent(kind="play", task=str(data.get("play", "")))
    if name == "playbook_on_task_start":
        return TaskEvent(kind="task", task=str(data.get("task", "")))
    kind = _HOST_EVENTS.get(name)
    if kind is None:
        return None
    res = data.get("res") or {}
    if kind == "ok" and isinstance(res, dict) and res.get("changed"):
        kind = "changed"
    if kind == "failed" and data.get("ignore_errors"):
        kind = "ignored"
    message = str(res.get("msg", "")) if isinstance(res, dict) else ""
    host = str(data.get("host", ""))
    return TaskEvent(kind=kind, task=str(data.get("task", "")), host=host, message=message)


def _result(runner: Any, private_dir: Path) -> RunResult:
    """Map ansible-runner's status and stats onto a RunResult and its exit code."""
    status: Status = runner.status
    if status == "canceled":
        raise InterruptedRunError(f"run interrupted; artifacts in {private_dir}")
    stats: dict[str, dict[str, int]] | None = runner.stats
    if stats is None:
        problem = _first_error(runner, private_dir)
        raise UsageError(f"ansible-playbook stopped before running any host: {problem}")
    # A play whose hosts: pattern matches nothing is skipped and ansible-playbook still exits 0,
    # so ansible-runner reports "successful"; no processed host is a config error, not a success.
    if not stats.get("processed"):
        raise UsageError("hosts pattern matched no inventory hosts")
    failed = tuple(sorted(stats.get("failures", {})))
    unreachable = tuple(sorted(stats.get("dark", {})))
    return RunResult(
        status=status,
        rc=int(runner.rc),
        exit_code=_exit_code(status, failed, unreachable),
        hosts=tuple(_host_stats(host, stats) for host in sorted(stats["processed"])),
        failed=failed,
        unreachable=unreachable,
        artifact_dir=private_dir,
    )


def _exit_code(status: Status, failed: tuple[str, ...], unreachable: tuple[str, ...]) -> ExitCode:
    """1 when a host failed (a definite verdict wins), else 2 when one was unreachable or timed out."""
    if failed:
        return ExitCode.FAILED
    if unreachable or status == "timeout":
        return ExitCode.NOT_ASSESSED
    return ExitCode.OK if status == "successful" else ExitCode.FAILED


def _host_stats(host: str, stats: Mapping[str, Mapping[str, int]]) -> HostStats:
    """One host's recap counters."""

    def count(key: str) -> int:
        return int(stats.get(key, {}).get(host, 0))

    return HostStats(
        host=host,
        ok=count("ok"),
        changed=count("changed"),
        failed=count("failures"),
        unreachable=count("dark"),
        skipped=count("skipped"),
    )


def _first_error(runner: Any, private_dir: Path) -> str:
    """The first error line ansible-playbook printed, for a one-line message."""
    try:
        text = Path(runner.stdout.name).read_text(encoding="utf-8", errors="replace")
    except (AttributeError, OSError):
        text = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("ERROR!", "[ERROR]")):
            return stripped
    return f"rc={runner.rc}, see {private_dir}"


def parse_extravars(values: list[str]) -> dict[str, Any]:
    """Merge repeated `-e` values, as ansible-playbook takes them, into one dict.

    Each value is `key=value` (a string), `@FILE` (a YAML or JSON mapping) or an inline
    YAML/JSON mapping (`{"gpurack_expect": {"gpu": {"count": 8}}}`); later ones win.

    Raises:
        UsageError: a value is none of these, or the file is unreadable or not a mapping.
    """
    extravars: dict[str, Any] = {}
    for value in values:
        text, where = value, f"-e {value!r}"
        if value.startswith("@"):
            where = f"-e @{value[1:]}"
            try:
                text = Path(value[1:]).read_text()
            except OSError as exc:
                raise UsageError(f"{where}: cannot read the file ({exc.strerror})") from exc
        elif not value.lstrip().startswith("{"):
            key, sep, rest = value.partition("=")
            if not sep or not key.strip():
                raise UsageError(f"{where}: expected key=value, @FILE or a YAML/JSON mapping")
            extravars[key.strip()] = rest
            continue
        try:
            loaded = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise UsageError(f"{where}: not valid YAML or JSON ({exc})") from exc
        if not isinstance(loaded, dict):
            raise UsageError(f"{where}: expected a mapping of variable names to values")
        extravars.update(loaded)
    return extravars


def result_dict(result: RunResult) -> dict[str, Any]:
    """The machine form of a RunResult."""
    return {
        "status": result.status,
        "rc": result.rc,
        "exit_code": int(result.exit_code),
        "failed": list(result.failed),
        "unreachable": list(result.unreachable),
        "hosts": [
            {
                "host": h.host,
                "ok": h.ok,
                "changed": h.changed,
                "failed": h.failed,
                "unreachable": h.unreachable,
                "skipped": h.skipped,
            }
            for h in result.hosts
        ],
        "artifact_dir": str(result.artifact_dir),
    }
