"""module_utils/converge: live state strings, the stamp's reasons, and its atomic file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.converge import (
    Probe,
    Stamp,
    differences,
    digest,
    fstab_states,
    load,
    mount_states,
    package_states,
    path_state,
    save,
    service_states,
)


def test_a_file_state_changes_with_its_content_and_mode(tmp_path: Path) -> None:
    path = tmp_path / "90-gpurack.conf"
    assert path_state(str(path)) == "absent"
    path.write_text("vm.max_map_count = 1048576\n")
    path.chmod(0o644)
    first = path_state(str(path))
    assert first.startswith(f"file 0644 {os.getuid()}:{os.getgid()} ")
    path.write_text("vm.max_map_count = 1\n")
    assert path_state(str(path)) != first
    path.write_text("vm.max_map_count = 1048576\n")
    assert path_state(str(path)) == first
    path.chmod(0o600)
    assert path_state(str(path)) != first


def test_folders_links_and_devices_are_described_not_read(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir(mode=0o755)
    (tmp_path / "link").symlink_to("d")
    assert path_state(str(tmp_path / "d")).startswith("dir ")
    assert path_state(str(tmp_path / "link")) == "link -> d"
    # A device is named by its number: reading /dev/zero would never end.
    assert path_state("/dev/zero") == f"char 0666 0:0 {os.major(os.stat('/dev/zero').st_rdev)}:5"


def test_mounts_are_read_from_mountinfo_with_escapes() -> None:
    mountinfo = (
        "36 25 259:3 / /raid rw,relatime shared:1 - xfs /dev/md127 rw,attr2\n"
        "37 36 259:3 /var/lib/kubelet /var/lib/kubelet rw - xfs /dev/md127 rw\n"
        "38 25 0:5 / /mnt/with\\040space rw - tmpfs tmpfs rw\n"
    )
    assert mount_states(mountinfo, ["/raid", "/var/lib/kubelet", "/mnt/with space", "/gone"]) == {
        "/raid": "/dev/md127 xfs /",
        "/var/lib/kubelet": "/dev/md127 xfs /var/lib/kubelet",
        "/mnt/with space": "tmpfs tmpfs /",
        "/gone": "absent",
    }


def test_fstab_entries_in_use_by_type() -> None:
    fstab = (
        "UUID=1 / ext4 defaults 0 1\n"
        "# /swapfile none swap sw 0 0  # disabled by gpurack os_tuning\n"
        "UUID=2 /raid xfs noatime,nofail 0 0\n"
    )
    in_use = {"swap": "none", "xfs": "UUID=2 /raid xfs noatime,nofail"}
    assert fstab_states(fstab, ["swap", "xfs"]) == in_use
    assert fstab_states(fstab + "/swapfile none swap sw 0 0\n", ["swap"]) == {
        "swap": "/swapfile none swap sw"
    }


def test_packages_and_services_from_their_tools_output() -> None:
    dpkg = "irqbalance\t1.9.2-1\thi \nmdadm:amd64\t4.2-5\tii \n"
    assert package_states(dpkg, ["irqbalance", "mdadm", "xfsprogs"]) == {
        "irqbalance": "1.9.2-1 hi",
        "mdadm": "4.2-5 ii",
        "xfsprogs": "absent",
    }
    show = (
        "Id=containerd.service\nUnitFileState=enabled\nActiveState=active\n\n"
        "Id=irqbalance.service\nUnitFileState=disabled\nActiveState=inactive\n"
    )
    assert service_states(show, ["containerd", "irqbalance.service", "nothing"]) == {
        "containerd": "enabled active",
        "irqbalance.service": "disabled inactive",
        "nothing": "absent",
    }


def test_a_probe_refuses_unknown_keys() -> None:
    assert Probe.from_mapping({"paths": ["/etc/x"], "packages": None}).paths == ("/etc/x",)
    with pytest.raises(ValueError, match="unknown keys path"):
        Probe.from_mapping({"path": ["/etc/x"]})


def test_a_stamp_holds_until_the_inputs_or_an_item_change(tmp_path: Path) -> None:
    inputs = digest({"vars": {"os_tuning_swap_manage": True}, "role": "abc"})
    state = {"path /etc/sysctl.d/90-gpurack.conf": "file 0644 0:0 aa", "service irqbalance": "enabled active"}
    path = tmp_path / "stamps" / "os_tuning.json"
    assert differences(load(path), inputs, state) == ["no stamp recorded yet"]
    save(path, Stamp(inputs=inputs, state=state, facts={"os_tuning_reboot_pending": False}))
    recorded = load(path)
    assert recorded is not None and recorded.facts == {"os_tuning_reboot_pending": False}
    assert differences(recorded, inputs, state) == []
    assert differences(
        recorded, digest({"vars": {"os_tuning_swap_manage": False}, "role": "abc"}), state
    ) == ["the role or its inputs changed"]
    stopped = {**state, "service irqbalance": "enabled inactive"}
    assert differences(recorded, inputs, stopped) == [
        "service irqbalance: enabled active -> enabled inactive"
    ]
    assert differences(recorded, inputs, {**state, "package irqbalance": "absent"}) == [
        "package irqbalance: not probed -> absent"
    ]
    # Only the stamp, written whole: no temporary file is left beside it.
    assert os.listdir(path.parent) == ["os_tuning.json"]


@pytest.mark.parametrize("text", ["", "{not json", '{"format": 99, "inputs": "x", "state": {}, "facts": {}}'])
def test_an_unreadable_or_foreign_stamp_never_holds(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fabric.json"
    path.write_text(text)
    assert load(path) is None
    assert differences(load(path), "x", {}) == ["no stamp recorded yet"]


def test_the_digest_ignores_key_order() -> None:
    assert digest({"a": 1, "b": [1, 2]}) == digest({"b": [1, 2], "a": 1})
    assert digest({"a": 1}) != digest({"a": 2})
