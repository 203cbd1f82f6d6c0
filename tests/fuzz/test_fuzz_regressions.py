"""Every crash the parser fuzzing found, as a fixed example: each raised another exception before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import SCHEMA
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.expect import validate
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    CaptureFormatError,
    parse_capture_file,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_pci_scan import sysfs_int
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi import (
    parse_nvidia_smi_xml,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_smi_text import (
    parse_nvidia_smi_text,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_topology import (
    parse_nvlink_status,
    parse_topo_matrix,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nic import parse_ibstat, read_net
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.numa import (
    count_cpulist,
    parse_lscpu_json,
    parse_node_meminfo,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nvme import (
    parse_lsblk_os_disks,
    parse_nvme_list,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.os import parse_xid_events
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.pci import (
    parse_lspci_vvv,
    parse_sysfs_speed,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import LabelError, pool_taints
from ansible_collections.gpurack.bootstrap.plugins.module_utils.storage.scratch import parse_mountinfo
from gpurack.config import load_expect, load_pool
from gpurack.errors import UsageError

from .fuzz_node import NODES, DictSource, Node

HUGE = "9" * 5000
XML_GPU = (
    "<nvidia_smi_log><attached_gpus>1</attached_gpus><gpu id='00000000:00:06.0'>"
    "<product_name>NVIDIA H200</product_name><uuid>GPU-1</uuid><fb_memory_usage><total>{mem} MiB</total>"
    "</fb_memory_usage><ecc_errors><volatile>{deep}</volatile></ecc_errors></gpu></nvidia_smi_log>"
)
TOPO = "\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-15\t{numa}\n"
IBSTAT = "CA 'mlx5_0'\n\tNumber of ports: {ports}\n\tPort 1:\n\t\tState: Active\n\t\tBase lid: {lid}\n"
LSPCI = (
    "17:00.0 3D controller: NVIDIA\n\tLnkCap:\tSpeed {speed}GT/s, Width x16\n"
    "\tLnkSta:\tSpeed 32GT/s, Width x16\n"
)
XID = "[1.0] NVRM: Xid (PCI:0000:9b:00): {xid}, pid={pid}, name=x, GPU has fallen off the bus.\n"

# (what, call): each raised RecursionError, ValueError or UnicodeError before its fix.
REFUSED: list[tuple[str, Callable[[], object]]] = [
    (
        "xml nested 2000 deep",
        lambda: parse_nvidia_smi_xml(XML_GPU.format(mem=1, deep="<a>" * 2000 + "</a>" * 2000)),
    ),
    ("xml 5000-digit memory", lambda: parse_nvidia_smi_xml(XML_GPU.format(mem=HUGE, deep=""))),
    ("text 5000-digit memory", lambda: parse_nvidia_smi_text(f"Attached GPUs : {HUGE}\n")),
    ("topo 5000-digit NUMA", lambda: parse_topo_matrix(TOPO.format(numa=HUGE))),
    ("nvlink '1.2.3' GB/s", lambda: parse_nvlink_status("GPU 0: H200\n\t Link 0: 1.2.3 GB/s\n")),
    ("nvlink 5000-digit link", lambda: parse_nvlink_status(f"GPU 0: H200\n\t Link {HUGE}: 26.5 GB/s\n")),
    ("lspci '1.2.3' GT/s", lambda: parse_lspci_vvv(LSPCI.format(speed="1.2.3"))),
    ("lspci 5000-digit width", lambda: parse_lspci_vvv(LSPCI.format(speed="32").replace("x16", "x" + HUGE))),
    ("ibstat superscript port count", lambda: parse_ibstat(IBSTAT.format(ports="\u00b2", lid=1))),
    ("ibstat 5000-digit port count", lambda: parse_ibstat(IBSTAT.format(ports=HUGE, lid=1))),
    (
        "lscpu JSON nested 50000 deep",
        lambda: parse_lscpu_json('{"lscpu": ' + "[" * 50000 + "]" * 50000 + "}"),
    ),
    ("lscpu JSON 5000-digit number", lambda: parse_lscpu_json('{"lscpu": [' + HUGE + "]}")),
    (
        "nvme JSON nested 50000 deep",
        lambda: parse_nvme_list('{"Devices": ' + "[" * 50000 + "]" * 50000 + "}"),
    ),
    ("lsblk JSON nested 50000 deep", lambda: parse_lsblk_os_disks("[" * 50000 + "]" * 50000)),
    ("cpulist 5000-digit CPU", lambda: count_cpulist(f"0-{HUGE}")),
    ("meminfo 5000-digit MemTotal", lambda: parse_node_meminfo(f"Node 0 MemTotal: {HUGE} kB\n")),
    ("Xid 5000-digit code", lambda: parse_xid_events(XID.format(xid=HUGE, pid=1))),
    ("Xid 5000-digit pid", lambda: parse_xid_events(XID.format(xid=79, pid=HUGE))),
]


@pytest.mark.parametrize(("what", "call"), REFUSED, ids=[w for w, _ in REFUSED])
def test_malformed_output_is_a_facts_error(what: str, call: Callable[[], object]) -> None:
    with pytest.raises(FactsError):
        call()


def test_a_5000_digit_rc_is_no_capture_footer() -> None:
    with pytest.raises(CaptureFormatError, match="last line"):
        parse_capture_file(f"# $ uname -a\nLinux\n# rc={HUGE}\n")


def test_unicode_digits_are_no_numbers_where_isdigit_let_them_through() -> None:
    # '²' passes str.isdigit() but int() refuses it; these read as "no value" now.
    assert parse_ibstat(IBSTAT.format(ports=1, lid="\u00b2"))[0]["ports"][0]["base_lid"] is None
    assert parse_topo_matrix(TOPO.format(numa="\u00b2"))["affinity"]["GPU0"]["numa_node"] is None
    assert parse_xid_events(XID.format(xid=79, pid="\u00b2"))[0]["pid"] is None
    branch_rule = SCHEMA["driver"]["branch"]
    assert validate({"branch": "\u00b2"}, {"branch": branch_rule}, "driver") != []


def test_odd_sysfs_values_read_as_unknown() -> None:
    assert parse_sysfs_speed("1.2.3 GT/s PCIe") is None
    assert sysfs_int(HUGE) is None
    files = {**NODES[0].files, "sys/class/net/eth0/speed": "\u00b2\n"}
    eth0 = next(n for n in read_net(DictSource(Node(files, {}))) if n["name"] == "eth0")
    assert eth0["speed_mbps"] is None
    files["sys/class/net/eth0/speed"] = HUGE
    assert next(n for n in read_net(DictSource(Node(files, {}))) if n["name"] == "eth0")["speed_mbps"] is None


def test_taint_fields_of_mixed_types_are_a_label_error() -> None:
    with pytest.raises(LabelError, match="unknown fields 1, x"):
        pool_taints({"taints": [{"key": "a", "effect": "NoSchedule", 1: "", "x": ""}]})


def test_a_malformed_mountinfo_line_is_skipped() -> None:
    text = "22 1 252:1 / / rw - ext4 /dev/vda1 rw\n1 2 3 4 5 - x y\n23 1 x:y / /boot rw - ext4 /dev/vda2 rw\n"
    assert [m.mountpoint for m in parse_mountinfo(text)] == ["/"]


@pytest.mark.parametrize("load", [load_expect, load_pool])
@pytest.mark.parametrize("data", ["gpu:\n  count: 1\n".encode("utf-16"), b"\xff\xfe\x00garbage"])
def test_a_yaml_file_that_is_not_utf8_is_a_usage_error(
    tmp_path: Path, load: Callable[[Path], object], data: bytes
) -> None:
    path = tmp_path / "expect.yml"
    path.write_bytes(data)
    with pytest.raises(UsageError, match="UTF-8"):
        load(path)
