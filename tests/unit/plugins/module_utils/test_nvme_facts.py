"""nvme facts: both nvme-cli JSON layouts, the sysfs fallback, lsblk's OS disk, the H200 capture."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    RC_NOT_FOUND,
    CommandOutput,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.nvme import (
    OS_MOUNTPOINTS,
    gather_nvme,
    parse_lsblk_os_disks,
    parse_nvme_list,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import (
    CaptureSource,
    LiveSource,
    Runner,
)
from conftest import H200X1

# Synthetic: no real NVMe capture is in shared/fixtures. This models nvme-cli 1.16 (Ubuntu 22.04),
# whose `nvme list -o json` prints one flat object per namespace, NameSpace being the NSID.
NVME_CLI_1_16 = {
    "Devices": [
        {
            "NameSpace": 1,
            "DevicePath": "/dev/nvme0n1",
            "Firmware": "MPK7525Q",
            "Index": 0,
            "ModelNumber": "SAMSUNG MZWLR3T8HCLS-00A07",
            "ProductName": "Non-Volatile memory controller: Samsung Electronics Co Ltd Device 0xa80a",
            "SerialNumber": "S6EUNA0T600123",
            "UsedBytes": 19439616,
            "MaximumLBA": 7501476528,
            "PhysicalSize": 3840755982336,
            "SectorSize": 512,
        },
        {
            "NameSpace": 1,
            "DevicePath": "/dev/nvme1n1",
            "Firmware": "E2MU200",
            "Index": 1,
            "ModelNumber": "Micron_7450_MTFDKBG960TFR",
            "ProductName": "Non-Volatile memory controller: Micron Technology Inc Device 0x51c3",
            "SerialNumber": "2321439A1B2C",
            "UsedBytes": 960197124096,
            "MaximumLBA": 1875385008,
            "PhysicalSize": 960197124096,
            "SectorSize": 512,
        },
    ]
}

# Synthetic: models nvme-cli 2.8 (Ubuntu 24.04) `nvme list -v -o json`, nested as
# Devices[host] -> Subsystems -> Controllers -> Namespaces (NameSpace is the device name, NSID
# the id). Plain `nvme list -o json` stays flat in 2.x; the parser accepts the nested layout too
# so that a capture or a wrapper that used -v still reads.
NVME_CLI_2_8 = {
    "Devices": [
        {
            "HostNQN": "nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0051-3010-8052-b3c04f4e4d33",
            "HostID": "4c4c4544-0051-3010-8052-b3c04f4e4d33",
            "Subsystems": [
                {
                    "Subsystem": "nvme-subsys0",
                    "SubsystemNQN": "nqn.1994-11.com.samsung:nvme:PM1733:2.5-inch:S6EUNA0T600123",
                    "Controllers": [
                        {
                            "Controller": "nvme0",
                            "Cntlid": "65",
                            "SerialNumber": "S6EUNA0T600123",
                            "ModelNumber": "SAMSUNG MZWLR3T8HCLS-00A07",
                            "Firmware": "MPK7525Q",
                            "Transport": "pcie",
                            "Address": "0000:4b:00.0",
                            "Slot": "17",
                            "Namespaces": [
                                {
                                    "NameSpace": "nvme0n1",
                                    "Generic": "ng0n1",
                                    "NSID": 1,
                                    "UsedBytes": 19439616,
                                    "MaximumLBA": 7501476528,
                                    "PhysicalSize": 3840755982336,
                                    "SectorSize": 512,
                                }
                            ],
                            "Paths": [],
                        }
                    ],
                    "Namespaces": [],
                },
                {
                    # Native multipath: the shared namespace hangs off the subsystem.
                    "Subsystem": "nvme-subsys1",
                    "SubsystemNQN": "nqn.2014.08.org.nvmexpress:1344134421439A1B2C",
                    "Controllers": [
                        {
                            "Controller": "nvme1",
                            "Cntlid": "0",
                            "SerialNumber": "2321439A1B2C",
                            "ModelNumber": "Micron_7450_MTFDKBG960TFR",
                            "Firmware": "E2MU200",
                            "Transport": "pcie",
                            "Address": "0000:18:00.0",
                            "Slot": "",
                            "Namespaces": [],
                            "Paths": [{"Path": "nvme1c1n1", "ANAState": "optimized"}],
                        }
                    ],
                    "Namespaces": [
                        {
                            "NameSpace": "nvme1n1",
                            "Generic": "ng1n1",
                            "NSID": 1,
                            "UsedBytes": 960197124096,
                            "MaximumLBA": 1875385008,
                            "PhysicalSize": 960197124096,
                            "SectorSize": 512,
                        }
                    ],
                },
            ],
        }
    ]
}

# Synthetic: nvme-cli 2.0-2.3 `-v` put the subsystem objects straight into Devices.
NVME_CLI_2_2 = {"Devices": NVME_CLI_2_8["Devices"][0]["Subsystems"]}

EXPECTED = [
    {
        "name": "nvme0n1",
        "model": "SAMSUNG MZWLR3T8HCLS-00A07",
        "serial": "S6EUNA0T600123",
        "firmware": "MPK7525Q",
        "size_bytes": 3840755982336,
        "namespace": 1,
        "is_os_disk": None,
    },
    {
        "name": "nvme1n1",
        "model": "Micron_7450_MTFDKBG960TFR",
        "serial": "2321439A1B2C",
        "firmware": "E2MU200",
        "size_bytes": 960197124096,
        "namespace": 1,
        "is_os_disk": None,
    },
]

# Synthetic: the subset of `lsblk -J -O` (util-linux 2.39) that matters, nvme1n1 holding the OS.
LSBLK = {
    "blockdevices": [
        {"name": "nvme0n1", "kname": "nvme0n1", "mountpoint": None, "mountpoints": [None]},
        {
            "name": "nvme1n1",
            "kname": "nvme1n1",
            "mountpoint": None,
            "mountpoints": [None],
            "children": [
                {"name": "nvme1n1p1", "kname": "nvme1n1p1", "mountpoints": ["/boot/efi"]},
                {
                    "name": "nvme1n1p2",
                    "kname": "nvme1n1p2",
                    "mountpoints": [None],
                    "children": [{"name": "vg0-root", "kname": "dm-0", "mountpoints": ["/"]}],
                },
            ],
        },
    ]
}


def _runner(outputs: Mapping[tuple[str, ...], CommandOutput]) -> Runner:
    def run(argv: Sequence[str]) -> CommandOutput:
        return outputs.get(tuple(argv), CommandOutput(rc=RC_NOT_FOUND, stdout=""))

    return run


def _ok(doc: Any) -> CommandOutput:
    return CommandOutput(rc=0, stdout=json.dumps(doc, indent=2))


@pytest.mark.parametrize("doc", [NVME_CLI_1_16, NVME_CLI_2_8, NVME_CLI_2_2], ids=["1.16", "2.8", "2.2"])
def test_parse_nvme_list_both_layouts_give_same_disks(doc: dict[str, Any]) -> None:
    assert parse_nvme_list(json.dumps(doc)) == EXPECTED


def test_parse_nvme_list_empty_output_has_no_disks() -> None:
    assert parse_nvme_list("") == []
    assert parse_nvme_list('{"Devices": []}') == []


def test_parse_nvme_list_invalid_json_raises() -> None:
    with pytest.raises(FactsError, match=r"nvme list -o json: invalid JSON"):
        parse_nvme_list('{"Devices": [{"DevicePath": "/dev/nvme0n1",')


def test_parse_nvme_list_entry_without_device_path_raises() -> None:
    with pytest.raises(FactsError, match="without DevicePath"):
        parse_nvme_list('{"Devices": [{"ModelNumber": "X"}]}')


def test_gather_nvme_lsblk_marks_os_disk_through_children(tmp_path: Path) -> None:
    runner = _runner({("nvme", "list", "-o", "json"): _ok(NVME_CLI_2_8), ("lsblk", "-J", "-O"): _ok(LSBLK)})
    facts = gather_nvme(LiveSource(runner, tmp_path))
    assert facts["source"] == "nvme-list"
    assert facts["sources"] == ["nvme list -o json", "lsblk -J -O"]
    assert {d["name"]: d["is_os_disk"] for d in facts["disks"]} == {"nvme0n1": False, "nvme1n1": True}


def test_parse_lsblk_os_disks_h200x1_root_is_on_vda() -> None:
    text = (H200X1 / "lsblk.json").read_text().split("\n", 1)[1].rsplit("# rc=", 1)[0]
    assert parse_lsblk_os_disks(text) == {"zram0": False, "vda": True, "vdb": False}


def test_gather_nvme_h200x1_without_nvme_cli_finds_no_nvme_in_sysfs() -> None:
    # vda and vdb are virtio disks: sysfs is read, but nothing there is NVMe.
    facts = gather_nvme(CaptureSource(H200X1))
    assert facts["available"] is True
    assert facts["source"] == "sysfs"
    assert facts["disks"] == []


def test_gather_nvme_sysfs_fallback_reads_sectors_and_ids(tmp_path: Path) -> None:
    # A sysfs tree as a live host shows one namespace, its partition and a hidden multipath node.
    block = tmp_path / "sys/class/block"
    ns = block / "nvme0n1"
    (ns / "device").mkdir(parents=True)
    (ns / "size").write_text("7501476528\n")
    (ns / "nsid").write_text("1\n")
    (ns / "device/model").write_text("SAMSUNG MZWLR3T8HCLS-00A07              \n")
    (ns / "device/serial").write_text("S6EUNA0T600123      \n")
    (ns / "device/firmware_rev").write_text("MPK7525Q\n")
    for other in ("nvme0n1p1", "nvme0c0n1", "sda"):
        (block / other).mkdir()
        (block / other / "size").write_text("2048\n")
    facts = gather_nvme(LiveSource(_runner({}), tmp_path))
    assert facts["source"] == "sysfs"
    assert facts["disks"] == [
        {
            "name": "nvme0n1",
            "model": "SAMSUNG MZWLR3T8HCLS-00A07",
            "serial": "S6EUNA0T600123",
            "firmware": "MPK7525Q",
            "size_bytes": 7501476528 * 512,
            "namespace": 1,
            "is_os_disk": None,  # no lsblk
        }
    ]


def test_gather_nvme_invalid_json_in_capture_copy_raises(tmp_path: Path) -> None:
    copy = tmp_path / "h200x1"
    shutil.copytree(H200X1, copy, copy_function=shutil.copyfile)
    for path in [copy, *copy.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    # Edit: nvme-cli present, but its JSON is cut off mid-object.
    (copy / "nvme-list.json").write_text('# $ nvme list -o json\n{"Devices": [{"NameSpace": 1,\n# rc=0\n')
    with pytest.raises(FactsError, match=r"^nvme list -o json: invalid JSON"):
        gather_nvme(CaptureSource(copy))


def test_gather_nvme_without_tool_or_sysfs_is_unavailable(tmp_path: Path) -> None:
    facts = gather_nvme(LiveSource(_runner({}), tmp_path))
    assert facts["available"] is False
    assert "nvme is not installed" in facts["reason"]
    assert facts["disks"] == []


def test_a_disk_holding_var_is_an_os_disk_for_the_facts_and_for_scratch() -> None:
    """One list of OS mountpoints: the facts' is_os_disk and the scratch planner's never-wipe rule."""
    from ansible_collections.gpurack.bootstrap.plugins.module_utils.storage import scratch

    lsblk = {
        "blockdevices": [
            {"name": "nvme0n1", "type": "disk", "mountpoints": [None]},
            {"name": "nvme1n1", "type": "disk", "children": [{"name": "nvme1n1p1", "mountpoints": ["/var"]}]},
        ]
    }
    assert parse_lsblk_os_disks(json.dumps(lsblk)) == {"nvme0n1": False, "nvme1n1": True}
    assert scratch.OS_MOUNTPOINTS is OS_MOUNTPOINTS
    assert {"/", "/boot", "/boot/efi", "/usr", "/var"} <= OS_MOUNTPOINTS
