"""Each role gated by a converge stamp probes every file, folder and mount its tasks write.

A write the probe misses would let a hand edit survive a re-run that says changed=0. Reading
the tasks keeps the probe honest when a task is added (docs/performance.md, "The re-run").
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]

# Modules that write a path, and the option naming it.
WRITERS = {
    "ansible.builtin.template": "dest",
    "ansible.builtin.copy": "dest",
    "ansible.builtin.file": "path",
    "ansible.builtin.lineinfile": "path",
    "ansible.builtin.replace": "path",
    "ansible.builtin.get_url": "dest",
    "ansible.builtin.unarchive": "dest",
    "ansible.posix.mount": "path",
}

# Writes whose path is not probed as written, and the probe text that covers each instead.
COVERED_OTHERWISE = {
    ("os_tuning", "/etc/fstab"): "fstab: [swap]",
    ("container_runtime", "{{ __container_runtime_dir }}"): "- /etc/containerd\n",
    ("container_runtime", "/var/cache/containerd-{{ container_runtime_containerd_mirror_url | basename }}"): (
        "/var/cache/containerd-*"
    ),
    ("container_runtime", "/usr/local"): "/usr/local/bin/containerd",
    ("nvme_scratch", "{{ __nvme_scratch_mdadm_conf }}"): "[__nvme_scratch_mdadm_conf,",
    ("nvme_scratch", "{{ nvme_scratch_mountpoint }}"): 'mounts: "{{ [nvme_scratch_mountpoint]',
    ("nvme_scratch", "{{ __nvme_scratch_relocate_path }}"): "+ nvme_scratch_relocate }}",
    ("nvme_scratch", "{{ nvme_scratch_mountpoint }}{{ __nvme_scratch_relocate_path }}"): (
        "nvme_scratch_relocate | map('regex_replace', '^', nvme_scratch_mountpoint)"
    ),
    ("fabric", "{{ __fabric_network_dir }}/10-gpurack-{{ __fabric_interface.name }}.network"): (
        "{{ __fabric_network_dir }}/10-gpurack-*.network"
    ),
    ("fabric", "{{ __fabric_stale.path }}"): "{{ __fabric_network_dir }}/10-gpurack-*.network",
    ("kubeadm_control_plane", "{{ __kubeadm_control_plane_dir.path }}"): "__kubeadm_control_plane_dirs |",
}

GATED = sorted(
    path.parent.parent.name
    for path in REPO.glob("roles/*/tasks/main.yml")
    if "gpurack.bootstrap.converge_stamp" in path.read_text()
)


def _writes(tasks: list[dict[str, Any]] | None) -> Iterator[str]:
    """The paths the tasks write on the host (not those delegated to the controller)."""
    for task in tasks or []:
        for section in ("block", "rescue", "always"):
            yield from _writes(task.get(section))
        if task.get("delegate_to") == "localhost":
            continue
        for module, option in WRITERS.items():
            args = task.get(module)
            if isinstance(args, dict) and option in args:
                yield str(args[option])


def test_the_prepare_roles_and_the_control_plane_are_gated() -> None:
    prepare = ["container_runtime", "fabric", "nvidia_driver", "nvme_scratch", "os_tuning"]
    assert sorted([*prepare, "kubeadm_control_plane"]) == GATED


@pytest.mark.parametrize("role", GATED)
def test_every_write_of_a_gated_role_is_probed(role: str) -> None:
    probe_text = (REPO / "roles" / role / "vars" / "main.yml").read_text().split("_converge_probe:", 1)[1]
    writes = {
        written
        for tasks_file in sorted((REPO / "roles" / role / "tasks").glob("*.yml"))
        for written in _writes(yaml.safe_load(tasks_file.read_text()))
    }
    assert writes, role
    missing = [
        written
        for written in sorted(writes)
        if COVERED_OTHERWISE.get((role, written), written) not in probe_text
    ]
    assert missing == [], f"{role} writes these but its __{role}_converge_probe does not probe them"


@pytest.mark.parametrize("role", GATED)
def test_a_gated_role_records_its_stamp_after_its_handlers(role: str) -> None:
    """The stamp is recorded last, after the handlers ran, with the inputs and probe it checks."""
    tasks = REPO / "roles" / role / "tasks"
    recorded = [path for path in tasks.glob("*.yml") if "state: recorded" in path.read_text()]
    assert len(recorded) == 1, role
    body = yaml.safe_load(recorded[0].read_text())
    assert body[-1]["gpurack.bootstrap.converge_stamp"]["state"] == "recorded"
    if (REPO / "roles" / role / "handlers").is_dir():
        assert any(task.get("ansible.builtin.meta") == "flush_handlers" for task in body), role
    check = next(
        task["gpurack.bootstrap.converge_stamp"]
        for task in yaml.safe_load((tasks / "main.yml").read_text())
        if "gpurack.bootstrap.converge_stamp" in task
    )
    record = body[-1]["gpurack.bootstrap.converge_stamp"]
    assert (check["inputs"], check["probe"]) == (record["inputs"], record["probe"])
