"""Property: lspci, ibstat, the sysfs readers, lscpu/nvme/lsblk JSON, the OS parsers and the Xid log
parser parse or raise FactsError (the scratch-disk probes: ProbeError), never any other exception."""

from __future__ import annotations

import json
from collections.abc import Callable

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.xid import xid_info
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nic import (
    IBSTAT_ARGV,
    SYSFS_IB,
    SYSFS_NET,
    gather_nic,
    parse_ibstat,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.numa import (
    LSCPU_ARGV,
    SYSFS_NODES,
    count_cpulist,
    gather_numa,
    parse_lscpu_json,
    parse_node_meminfo,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nvme import (
    LSBLK_ARGV,
    NVME_LIST_ARGV,
    SYSFS_BLOCK,
    gather_nvme,
    parse_lsblk_os_disks,
    parse_nvme_list,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.os import (
    KERNEL_LOG_ARGV,
    LSMOD_ARGV,
    MOKUTIL_ARGV,
    SERVICES_ARGV,
    UNAME_ARGV,
    gather_os,
    parse_lsmod,
    parse_os_release,
    parse_sb_state,
    parse_service_states,
    parse_uname,
    parse_xid_events,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci import (
    LSPCI_ARGV,
    SYSFS_PCI,
    gather_pci,
    parse_lspci_vvv,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.storage.scratch import (
    ProbeError,
    parse_blkid_export,
    parse_mountinfo,
    parse_swaps,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from .fuzz_inputs import attempt, texts
from .fuzz_node import NODES, PUBLIC, DictSource, lspci_excerpt, mutated_node

GATHER_REFUSALS = (FactsError, CaptureError)


def _outputs(argv: tuple[str, ...], *extra: str) -> tuple[str, ...]:
    found = {n.commands[argv].stdout for n in NODES if argv in n.commands and n.commands[argv].rc == 0}
    return (*sorted(found), *extra)


LSPCI = (lspci_excerpt(30_000), (PUBLIC / "lspci-vvv.hgx-h100").read_text()[-30_000:].partition("\n\n")[2])
IBSTAT = tuple((PUBLIC / f"ibstat.47.0.h100.all.active.{i}").read_text() for i in range(3))
LSCPU = _outputs(LSCPU_ARGV)
LSBLK = _outputs(LSBLK_ARGV)
# SYNTHETIC: no capture here had nvme-cli; shaped like nvme-cli 1.x and 2.x (--verbose) output.
NVME = (
    json.dumps(
        {"Devices": [{"DevicePath": "/dev/nvme0n1", "ModelNumber": "X", "PhysicalSize": 3840755982336}]}
    ),
    json.dumps(
        {
            "Devices": [
                {
                    "HostNQN": "nqn",
                    "Subsystems": [
                        {
                            "Subsystem": "nvme-subsys0",
                            "Controllers": [
                                {
                                    "Controller": "nvme0",
                                    "ModelNumber": "SAMSUNG MZQL23T8HCLS-00A07",
                                    "SerialNumber": "S64H",
                                    "Firmware": "GDC5602Q",
                                    "Namespaces": [
                                        {"NameSpace": "nvme0n1", "NSID": 1, "PhysicalSize": 3840755982336}
                                    ],
                                }
                            ],
                            "Namespaces": [],
                        }
                    ],
                }
            ]
        },
        indent=2,
    ),
)
LSMOD = (
    "Module                  Size  Used by\n"
    "nvidia_uvm           4956160  0\n"
    "nvidia              14381056  1 nvidia_uvm\n",
)
SB_STATE = ("SecureBoot enabled\n", "SecureBoot disabled\nPlatform is in Setup Mode\n")
SERVICES = ("active\ninactive\nunknown\nactive\n", "failed\nactivating\nactive\ninactive\n")
DMESG = (*_outputs(KERNEL_LOG_ARGV), (PUBLIC / "dmesg-with-xid-119.log").read_text())
OS_RELEASE = tuple(sorted({n.files["os-release"] for n in NODES if "os-release" in n.files}))
MOUNTINFO = (
    "22 1 252:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
    "25 22 259:3 / /scratch rw - xfs /dev/md127 rw\n"
    "26 22 0:5 / /dev rw - devtmpfs udev rw\n"
)
SWAPS = "Filename\tType\tSize\tUsed\tPriority\n/dev/vda2 partition 8388604 0 -2\n"
BLKID = "DEVNAME=/dev/nvme0n1\nTYPE=linux_raid_member\nUUID=1-2\n"

LSPCI_LINES = (
    "\t\tLnkSta:\tSpeed 1.2.3GT/s, Width x16",
    "\t\tLnkCap:\tSpeed 16GT/s, Width x",
    "ff:00.0 x",
    "\tNUMA node: -9",
)
IBSTAT_LINES = (
    "CA 'mlx5_9'",
    "\tNumber of ports: \u00b2",
    "\tPort 1:",
    "\t\tBase lid: \u00b2",
    "\t\tRate: 1.2.3",
)
XID_LINES = (
    "NVRM: Xid (PCI:0000:9b:00): 79, pid=1, name=x, GPU has fallen off the bus.",
    "NVRM: Xid (): 1, x",
)


def _parser(
    name: str,
    strategy: st.SearchStrategy[str],
    parse: Callable[[str], object],
    refusals: tuple[type[BaseException], ...],
) -> Callable[[], None]:
    """A property test: `parse` takes every input of `strategy` or raises one of `refusals`."""

    @settings(database=None, deadline=None)
    @given(strategy)
    def test(text: str) -> None:
        attempt(name, lambda: parse(text), refusals)

    return test


test_lspci_vvv = _parser("lspci -vvv", texts(LSPCI, LSPCI_LINES), parse_lspci_vvv, (FactsError,))
test_ibstat = _parser("ibstat", texts(IBSTAT, IBSTAT_LINES), parse_ibstat, (FactsError,))
test_lscpu_json = _parser(
    "lscpu -J",
    texts(LSCPU, nest=('"lscpu": [', '{"field": "a:", "children": [', "]}", ",")),
    parse_lscpu_json,
    (FactsError,),
)
test_nvme_list_json = _parser(
    "nvme list -o json", texts(NVME, nest=('"Devices": [', "[", "]", ",")), parse_nvme_list, (FactsError,)
)
test_lsblk_json = _parser(
    "lsblk -J -O",
    texts(LSBLK, nest=('"blockdevices": [', '{"name": "x", "children": [', "]}", ",")),
    parse_lsblk_os_disks,
    (FactsError,),
)
test_xid_log = _parser("kernel log Xid lines", texts(DMESG, XID_LINES), parse_xid_events, (FactsError,))
test_uname = _parser("uname -a", texts(_outputs(UNAME_ARGV)), parse_uname, (FactsError,))
test_os_release = _parser("os-release", texts(OS_RELEASE), parse_os_release, ())
test_lsmod = _parser("lsmod", texts(_outputs(LSMOD_ARGV, *LSMOD)), parse_lsmod, (FactsError,))
test_sb_state = _parser(
    "mokutil --sb-state", texts(_outputs(MOKUTIL_ARGV, *SB_STATE)), parse_sb_state, (FactsError,)
)
test_services = _parser(
    "systemctl is-active",
    texts(_outputs(SERVICES_ARGV, *SERVICES)),
    lambda text: parse_service_states(SERVICES_ARGV[2:], text),
    (FactsError,),
)
test_cpulist = _parser("sysfs cpulist", texts(("0-15,32-47\n", "0\n", "0-63")), count_cpulist, (FactsError,))
test_node_meminfo = _parser(
    "sysfs node meminfo",
    texts(("Node 0 MemTotal:       131900116 kB\nNode 0 MemFree: 1 kB\n",)),
    parse_node_meminfo,
    (FactsError,),
)
test_mountinfo = _parser("/proc/self/mountinfo", texts((MOUNTINFO,)), parse_mountinfo, (ProbeError,))
test_swaps = _parser("/proc/swaps", texts((SWAPS,)), parse_swaps, (ProbeError,))
test_blkid = _parser(
    "blkid -p -o export",
    texts((BLKID,)),
    lambda text: parse_blkid_export("/dev/x", 0, text, ""),
    (ProbeError,),
)


@settings(database=None, deadline=None)
@given(st.integers(-(2**80), 2**80))
def test_xid_catalogue_answers_every_code(code: int) -> None:
    attempt("Xid catalogue (xid_info)", lambda: xid_info(code), ())


def _gatherer(
    name: str,
    gather: Callable[[DictSource], object],
    files: tuple[str, ...],
    outputs: dict[tuple[str, ...], tuple[str, ...]],
) -> Callable[[], None]:
    """A property test: `gather` reads a node mutated below `files` and in `outputs`, or refuses it."""

    @settings(database=None, deadline=None)
    @given(mutated_node(files, tuple(outputs), outputs))
    def test(source: DictSource) -> None:
        attempt(name, lambda: gather(source), GATHER_REFUSALS)

    return test


test_gather_pci = _gatherer("gather_pci (lspci + sysfs PCI)", gather_pci, (SYSFS_PCI,), {LSPCI_ARGV: LSPCI})
test_gather_nic = _gatherer(
    "gather_nic (sysfs net/infiniband + ibstat)", gather_nic, (SYSFS_NET, SYSFS_IB), {IBSTAT_ARGV: IBSTAT}
)
test_gather_numa = _gatherer(
    "gather_numa (sysfs nodes + lscpu)", gather_numa, (SYSFS_NODES,), {LSCPU_ARGV: LSCPU}
)
test_gather_nvme = _gatherer(
    "gather_nvme (sysfs block + nvme + lsblk)",
    gather_nvme,
    (SYSFS_BLOCK,),
    {NVME_LIST_ARGV: NVME, LSBLK_ARGV: LSBLK},
)
test_gather_os = _gatherer(
    "gather_os (uname, os-release, cgroup, modules, dmesg)",
    gather_os,
    ("os-release", "sys/fs/cgroup", "sys/module"),
    {
        UNAME_ARGV: (),
        MOKUTIL_ARGV: SB_STATE,
        LSMOD_ARGV: LSMOD,
        KERNEL_LOG_ARGV: DMESG,
        SERVICES_ARGV: SERVICES,
    },
)
