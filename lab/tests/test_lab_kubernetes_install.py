"""`lab up --kubernetes` runs its playbook through the driver's runner, not a subprocess of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gpurack.errors import ExitCode
from gpurack.runner import RunRequest, RunResult, TaskEvent
from gpurack_lab import lab_kubernetes, paths

REPO = Path(__file__).resolve().parents[2]


def _result(tmp_path: Path, code: ExitCode, failed: tuple[str, ...] = ()) -> RunResult:
    stdout = tmp_path / "artifacts" / "run-id" / "stdout"
    stdout.parent.mkdir(parents=True)
    stdout.write_text("PLAY RECAP\n")
    status = "successful" if code == ExitCode.OK else "failed"
    return RunResult(status, int(code), code, (), failed, (), tmp_path)


def test_install_runs_the_lab_playbook_through_the_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[RunRequest, Path]] = []

    def run(request: RunRequest, runs_dir: Path, on_event: Any = None) -> RunResult:
        seen.append((request, runs_dir))
        return _result(tmp_path, ExitCode.OK)

    monkeypatch.setattr(lab_kubernetes, "run_playbook", run)
    log = lab_kubernetes.install(lambda _: None)
    ((request, runs_dir),) = seen
    assert request.playbook == REPO / "lab" / "playbooks" / "lab_kubernetes.yml"
    assert request.playbook == paths.playbook("lab_kubernetes")
    assert request.inventory == REPO / "lab" / "inventory"
    assert request.extravars == {"lab_k8s_build_dir": str(lab_kubernetes.build_dir())}
    assert runs_dir.parts[-2:] == ("lab", "runs")
    assert log == tmp_path / "artifacts" / "run-id" / "stdout"


def test_a_failed_plumbing_run_names_the_host_and_the_failed_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run(request: RunRequest, runs_dir: Path, on_event: Any = None) -> RunResult:
        task = "Install the Kubernetes and containerd binaries"
        on_event(TaskEvent("failed", task, "lab-w1", "no such file"))
        return _result(tmp_path, ExitCode.FAILED, ("lab-w1",))

    monkeypatch.setattr(lab_kubernetes, "run_playbook", run)
    with pytest.raises(lab_kubernetes.PlumbingError, match=r"failed on lab-w1(.|\n)*binaries: no such file"):
        lab_kubernetes.install(lambda _: None)


def test_the_lab_runs_no_ansible_playbook_of_its_own() -> None:
    sources = "\n".join(p.read_text() for p in (REPO / "lab" / "gpurack_lab").rglob("*.py"))
    assert "ansible-playbook" not in sources.replace("ansible-playbook's", "")
