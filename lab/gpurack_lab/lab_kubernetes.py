"""Kubernetes in the lab: the offline build (tools/k8s-build) installed on the node containers.

`gpurack lab up --kubernetes` runs playbooks/lab_kubernetes.yml over the generated inventory:
binaries, pinned images, units, writable cgroups, the bridge CNI and the lab-only GPU
advertiser. Real sites get these from packages and their own CNI; `gpurack run site` then
prepares, joins and labels the nodes exactly as on real hardware.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from gpurack.errors import ExitCode, GpurackError
from gpurack.lab.state import inventory_dir, lab_dir
from gpurack.project import project_root

CACHE_ENV = "GPURACK_K8S_CACHE"
# What the plumbing copies from the build; the rest of the build is not needed on the nodes.
REQUIRED = ("bin/kubeadm", "bin/kubelet", "bin/containerd", "bin/runc", "images/pause.tar")


class KubernetesBuildMissingError(GpurackError):
    """The offline Kubernetes build is not there; `make lab-k8s` makes it."""

    code = ExitCode.USAGE


class PlumbingError(GpurackError):
    """playbooks/lab_kubernetes.yml failed."""

    code = ExitCode.FAILED


def build_dir() -> Path:
    """`current` in the build cache: the build of the versions in tools/k8s-build/versions.env."""
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
    """Run playbooks/lab_kubernetes.yml on every lab node; return its log.

    Raises:
        PlumbingError: the playbook failed; the message names the log and its last lines.
    """
    step("Kubernetes plumbing on the nodes (playbooks/lab_kubernetes.yml)")
    log = lab_dir() / "lab-kubernetes.log"
    playbook = Path(sys.executable).with_name("ansible-playbook")
    argv = [
        str(playbook if playbook.exists() else "ansible-playbook"),
        "-i",
        str(inventory_dir()),
        str(project_root() / "playbooks" / "lab_kubernetes.yml"),
        "-e",
        f"lab_k8s_build_dir={build_dir()}",
    ]
    env = {**os.environ, "ANSIBLE_CONFIG": str(project_root() / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    with log.open("w") as out:
        done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, env=env, check=False)
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise PlumbingError(f"playbooks/lab_kubernetes.yml failed (rc {done.returncode}); see {log}:\n{tail}")
    return log
