"""os facts: the H200 capture, a real kernel log with Xid 119, synthetic tool outputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    RC_NOT_FOUND,
    CommandOutput,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.os import (
    KERNEL_LOG_ARGV,
    gather_os,
    parse_lsmod,
    parse_os_release,
    parse_sb_state,
    parse_service_states,
    parse_uname,
    parse_xid_events,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import (
    CaptureSource,
    LiveSource,
    Runner,
)
from conftest import H200X1, PUBLIC

XID_LOG = PUBLIC / "dmesg-with-xid-119.log"

# Synthetic lsmod (its real layout), with nouveau loaded and no nvidia.
LSMOD = """Module                  Size  Used by
nouveau              3096576  0
mxm_wmi                12288  1 nouveau
drm_ttm_helper         12288  1 nouveau
"""


def _runner(outputs: Mapping[tuple[str, ...], CommandOutput]) -> Runner:
    def run(argv: Sequence[str]) -> CommandOutput:
        return outputs.get(tuple(argv), CommandOutput(rc=RC_NOT_FOUND, stdout=""))

    return run


def _ok(text: str) -> CommandOutput:
    return CommandOutput(rc=0, stdout=text)


def test_gather_os_h200x1_reads_kernel_distribution_and_no_xid() -> None:
    facts = gather_os(CaptureSource(H200X1))
    assert facts["kernel"] == "6.18.44-fc-v657-gpu"
    assert facts["distribution"] == {
        "id": "ubuntu",
        "version_id": "24.04",
        "pretty_name": "Ubuntu 24.04.3 LTS",
    }
    # The capture has no sys/fs/cgroup, no mokutil file and no lsmod (rc=127) nor sys/module:
    assert facts["cgroup_version"] is None
    assert facts["secure_boot"] is None
    # the kernel log shows nvidia messages, but only lsmod or sys/module count as evidence.
    assert facts["modules"] == {"nouveau": None, "nvidia": None, "nvidia_peermem": None}
    assert facts["xid_events"] == []
    assert facts["sources"] == ["uname -a", "os-release", "dmesg"]


def test_parse_xid_events_gpud_log_finds_five_xid_119_on_9b() -> None:
    events = parse_xid_events(XID_LOG.read_text())
    assert len(events) == 5
    assert {(e["bus_id"], e["xid"]) for e in events} == {("0000:9b:00.0", 119)}
    assert events[0] == {
        "time": "Sun Feb 23 16:24:18 2025",
        "bus_id": "0000:9b:00.0",
        "xid": 119,
        "pid": 2024380,
        "process": "nvidia-smi",
        "message": "Timeout after 6s of waiting for RPC response from GPU4 GSP! "
        "Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).",
    }
    assert [e["process"] for e in events] == [
        "nvidia-smi",
        "nvidia-smi",
        "nvidia-smi",
        "cache_mgr_main",
        "gpud",
    ]
    assert events[-1]["time"] == "Sun Feb 23 16:30:13 2025"


def test_parse_xid_events_old_driver_unknown_pid_and_uptime_stamp() -> None:
    # Synthetic lines in the older drivers' wording, with dmesg's default uptime stamps.
    text = (
        "[   12.345678] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, "
        "GPU has fallen off the bus.\n"
        "[ 4242.000001] NVRM: Xid (PCI:0000:3b:00): 48, "
        "An uncorrectable double bit error (DBE) has been detected.\n"
    )
    first, second = parse_xid_events(text)
    assert first == {
        "time": "12.345678",
        "bus_id": "0000:3b:00.0",
        "xid": 79,
        "pid": None,
        "process": None,
        "message": "GPU has fallen off the bus.",
    }
    assert (second["xid"], second["pid"], second["time"]) == (48, None, "4242.000001")


def test_parse_xid_events_truncated_xid_line_raises(tmp_path: Path) -> None:
    copy = tmp_path / "dmesg.log"
    # Edit: cut the first Xid line right after its PCI address (a truncated log write).
    text = XID_LOG.read_text()
    start = text.index("NVRM: Xid (PCI:0000:9b:00)")
    end = text.index("\n", start)
    copy.write_text(text[: start + len("NVRM: Xid (PCI:0000:9b")] + text[end:])
    with pytest.raises(FactsError, match=r"kernel log: line 3 is a malformed Xid line"):
        parse_xid_events(copy.read_text())


def test_gather_os_kernel_log_from_live_runner_is_parsed(tmp_path: Path) -> None:
    facts = gather_os(LiveSource(_runner({KERNEL_LOG_ARGV: _ok(XID_LOG.read_text())}), tmp_path))
    assert [e["xid"] for e in facts["xid_events"]] == [119] * 5
    assert facts["kernel"] is None
    assert facts["distribution"] is None


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (CommandOutput(rc=0, stdout="SecureBoot enabled\n"), True),
        (CommandOutput(rc=0, stdout="SecureBoot disabled\nPlatform is in Setup Mode\n"), False),
        (CommandOutput(rc=1, stdout="EFI variables are not supported on this system\n"), None),
        (CommandOutput(rc=RC_NOT_FOUND, stdout=""), None),
    ],
)
def test_gather_os_mokutil_states_map_to_secure_boot(
    tmp_path: Path, output: CommandOutput, expected: bool | None
) -> None:
    facts = gather_os(LiveSource(_runner({("mokutil", "--sb-state"): output}), tmp_path))
    assert facts["secure_boot"] is expected


def test_parse_sb_state_unknown_text_raises() -> None:
    with pytest.raises(FactsError, match="mokutil --sb-state"):
        parse_sb_state("something else\n")


def test_gather_os_lsmod_wins_over_sys_module(tmp_path: Path) -> None:
    # sys/module says nvidia (a stale tree), lsmod says nouveau: lsmod is believed.
    (tmp_path / "sys/module/nvidia/parameters").mkdir(parents=True)
    facts = gather_os(LiveSource(_runner({("lsmod",): _ok(LSMOD)}), tmp_path))
    assert facts["modules"] == {"nouveau": True, "nvidia": False, "nvidia_peermem": False}
    assert "lsmod" in facts["sources"]


def test_gather_os_sys_module_used_without_lsmod(tmp_path: Path) -> None:
    (tmp_path / "sys/module/nvidia/parameters").mkdir(parents=True)
    (tmp_path / "sys/module/nvidia/refcnt").write_text("12\n")
    (tmp_path / "sys/module/video/parameters").mkdir(parents=True)
    facts = gather_os(LiveSource(_runner({}), tmp_path))
    assert facts["modules"] == {"nouveau": False, "nvidia": True, "nvidia_peermem": False}


def test_parse_lsmod_without_header_raises() -> None:
    with pytest.raises(FactsError, match="lsmod: first line"):
        parse_lsmod("nouveau 3096576 0\n")


def test_gather_os_cgroup_v2_from_controllers_file(tmp_path: Path) -> None:
    (tmp_path / "sys/fs/cgroup").mkdir(parents=True)
    (tmp_path / "sys/fs/cgroup/cgroup.controllers").write_text(
        "cpuset cpu io memory hugetlb pids rdma misc\n"
    )
    assert gather_os(LiveSource(_runner({}), tmp_path))["cgroup_version"] == 2


def test_gather_os_cgroup_v1_from_controller_dirs(tmp_path: Path) -> None:
    for controller in ("cpu", "memory", "devices", "unified"):
        (tmp_path / "sys/fs/cgroup" / controller).mkdir(parents=True)
    assert gather_os(LiveSource(_runner({}), tmp_path))["cgroup_version"] == 1


def test_parse_uname_third_field_is_kernel() -> None:
    text = "Linux gpu01 5.15.0-112-generic #122-Ubuntu SMP Thu May 23 07:48:21 UTC 2024 x86_64 GNU/Linux\n"
    assert parse_uname(text) == "5.15.0-112-generic"


def test_parse_uname_short_output_raises() -> None:
    with pytest.raises(FactsError, match="uname -a"):
        parse_uname("Linux\n")


def test_parse_os_release_removes_quotes() -> None:
    values = parse_os_release((H200X1 / "os-release").read_text())
    assert (values["ID"], values["VERSION_ID"], values["PRETTY_NAME"]) == (
        "ubuntu",
        "24.04",
        "Ubuntu 24.04.3 LTS",
    )


def test_parse_service_states_maps_units_in_order() -> None:
    units = ("nvidia-fabricmanager", "nvidia-persistenced", "containerd", "kubelet")
    # What systemctl prints on an HGX node before kubeadm join: one state per unit, in order.
    text = "active\nactive\ninactive\nunknown\n"
    assert parse_service_states(units, text) == {
        "nvidia-fabricmanager": "active",
        "nvidia-persistenced": "active",
        "containerd": "inactive",
        "kubelet": "unknown",
    }


def test_parse_service_states_short_output_raises() -> None:
    with pytest.raises(FactsError, match="2 units asked, 1 states printed"):
        parse_service_states(("a", "b"), "active\n")


def test_parse_service_states_garbage_state_raises() -> None:
    with pytest.raises(FactsError, match="unexpected state"):
        parse_service_states(("a",), "Failed to connect to bus: No such file or directory\n")


def test_gather_os_h200x1_has_no_service_facts(h200x1: Path) -> None:
    # The H200 capture predates the systemctl entry: services are unknown, not "inactive".
    assert gather_os(CaptureSource(h200x1))["services"] is None


def test_gather_os_without_systemd_has_unknown_services(tmp_path: Path) -> None:
    # What a Docker container without systemd as PID 1 answers (seen on the build machine).
    def runner(argv: Sequence[str]) -> CommandOutput:
        if argv[0] == "systemctl":
            return CommandOutput(
                rc=1,
                stdout="",
                stderr="System has not been booted with systemd as init system (PID 1). Can't operate.\n"
                "Failed to connect to bus: Host is down\n",
            )
        return CommandOutput(rc=RC_NOT_FOUND, stdout="")

    assert gather_os(LiveSource(runner, tmp_path))["services"] is None
