"""Kubernetes in the lab: the offline build (lab/k8s-build) installed on the node containers.

`gpurack lab up --kubernetes` runs lab/playbooks/lab_kubernetes.yml over the generated
inventory, through the driver's runner like any playbook: binaries, pinned images, units,
writable cgroups, the bridge CNI and the lab-only GPU advertiser. Real sites get these from
packages and their own CNI; `gpurack run site` then prepares, joins and labels the nodes
exactly as on real hardware.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from gpurack.errors import ExitCode, GpurackError
from gpurack.runner import RunRequest, TaskEvent, run_playbook

from gpurack_lab.paths import inventory_dir, playbook
from gpurack_lab.state import lab_dir

CACHE_ENV = "GPURACK_K8S_CACHE"
PLAYBOOK = "lab_kubernetes"
# What the plumbing copies from the build; the rest of the build is not needed on the nodes.
REQUIRED = ("bin/kubeadm", "bin/kubelet", "bin/containerd", "bin/runc", "images/pause.tar")


class KubernetesBuildMissingError(GpurackError):
    """The offline Kubernetes build is not there; `make lab-k8s` makes it."""

    code = ExitCode.USAGE


class PlumbingError(GpurackError):
    """lab/playbooks/lab_kubernetes.yml failed."""

    code = ExitCode.FAILED


def build_dir() -> Path:
    """`current` in the build cache: the build of the versions in lab/k8s-build/versions.env."""
    root = os.environ.get(CACHE_ENV) or str(Path.home() / ".cache" / "gpurack" / "k8s")
    return Path(root) / "current"


def kubeconfig() -> Path:
    """Where the lab's admin kubeconfig lands on this machine (mode 0600)."""
    return lab_dir() / "kubeconfig"


def require_build() -> Path:
    """The build folder, when it holds everything the nodes need.

    Raises:
        KubernetesBuildMissingError: with the command that builds it.
    """
    folder = build_dir()
    missing = [name for name in REQUIRED if not (folder / name).is_file()]
    if missing:
        raise KubernetesBuildMissingError(
            f"the offline Kubernetes build is missing {', '.join(missing)} under {folder}; "
            "run 'make lab-k8s' first (about 19 minutes cold, seconds when cached)"
        )
    return folder


def install(step: Callable[[str], None]) -> Path:
    """Run lab/playbooks/lab_kubernetes.yml on every lab node; return its output (the run's stdout).

    Raises:
        PlumbingError: the playbook failed; the message names the hosts, the log and its last lines.
    """
    step("Kubernetes plumbing on the nodes (lab/playbooks/lab_kubernetes.yml)")
    request = RunRequest(
        playbook=playbook(PLAYBOOK),
        inventory=inventory_dir(),
        extravars={"lab_k8s_build_dir": str(build_dir())},
    )
    failures: list[str] = []
    result = run_playbook(request, lab_dir() / "runs", _failures_into(failures))
    # ansible-runner keeps ansible-playbook's output as artifacts/<run id>/stdout.
    log = next(result.artifact_dir.glob("artifacts/*/stdout"), result.artifact_dir)
    if result.exit_code != ExitCode.OK:
        hosts = ", ".join((*result.failed, *result.unreachable)) or result.status
        tail = "\n".join(failures[-15:]) or _tail(log)
        raise PlumbingError(f"lab/playbooks/lab_kubernetes.yml failed on {hosts}; see {log}:\n{tail}")
    return log


def _failures_into(lines: list[str]) -> Callable[[TaskEvent], None]:
    """A runner event handler that keeps one line per failed or unreachable task."""

    def keep(event: TaskEvent) -> None:
        if event.kind in {"failed", "unreachable"}:
            lines.append(f"{event.host}: {event.task}: {event.message}")

    return keep


def _tail(log: Path, count: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-count:])
    except OSError:
        return "(no output)"
