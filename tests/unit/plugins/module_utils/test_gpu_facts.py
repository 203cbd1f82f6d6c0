"""Unit tests for the gpu_facts parsers and gatherer, over real captures and edited copies."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils._capture import (
    RC_NOT_FOUND,
    CommandOutput,
    parse_capture_file,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils._errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_facts import gather_gpu
from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_pci_scan import pcie_gen, scan_pci_gpus
from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_smi import (
    parse_nvidia_smi_text,
    parse_nvidia_smi_xml,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_topology import (
    parse_nvlink_status,
    parse_topo_matrix,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils._gpu_values import normalize_bus_id
from ansible_collections.gpurack.bootstrap.plugins.module_utils._source import CaptureSource

H100X8 = "nvidia-smi-q.535.161.08.h100x8"
RTX4090X8 = "nvidia-smi-q.535.154.05.rtx4090x8"
H200_UUID = "GPU-cf8daf37-ddce-01b6-79fe-9e7477c494b0"
NVIDIA_SMI_FILES = (
    "nvidia-smi-q.xml",
    "nvidia-smi-q.txt",
    "nvidia-smi-topo-m.txt",
    "nvidia-smi-nvlink-s.txt",
)


def _body(capture: Path, name: str) -> str:
    """The command output held in one capture file (frame removed)."""
    return parse_capture_file((capture / name).read_text(), name=name)[1].stdout


def _copy(capture: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "capture"
    shutil.copytree(capture, dest)
    dest.chmod(0o755)
    for path in dest.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return dest


def _remove_nvidia_smi(capture: Path) -> None:
    # Edit: every nvidia-smi file now says what a shell prints when the tool is not installed.
    for name in NVIDIA_SMI_FILES:
        (capture / name).write_text(
            f"# $ nvidia-smi ...\nsh: 1: nvidia-smi: not found\n# rc={RC_NOT_FOUND}\n"
        )


# --- Synthetic 8-GPU HGX output ---------------------------------------------------------
# SYNTHETIC, hand-written: modelled on `nvidia-smi topo -m` of a DGX/HGX H100 (8 SXM GPUs on
# NVSwitch, every GPU pair NV18, two ConnectX-7 ports, two NUMA nodes, driver 535+ layout:
# tab-separated, ANSI underline around the header row, a trailing GPU NUMA ID column after a
# double tab, and a "NIC Legend" block). Only 2 NICs are kept to keep the rows readable.
_GPUS8 = [f"GPU{i}" for i in range(8)]


def _topo_row(name: str, cells: Sequence[str], affinity: str = "") -> str:
    return "\t".join([name, *cells]) + affinity


def _hgx_topo() -> str:
    header = "\t\x1b[4m" + "\t".join(
        [*_GPUS8, "NIC0", "NIC1", "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]
    )
    rows = [header + "\x1b[0m"]
    for i, gpu in enumerate(_GPUS8):
        cells = [" X " if j == i else "NV18" for j in range(8)]
        cells += ["PIX" if i < 4 else "SYS", "SYS" if i < 4 else "PIX"]
        cpus, numa = ("0-55,112-167", "0") if i < 4 else ("56-111,168-223", "1")
        rows.append(_topo_row(gpu, cells, f"\t{cpus}\t{numa}\t\tN/A"))
    rows.append(_topo_row("NIC0", [*(["PIX"] * 4 + ["SYS"] * 4), " X ", "SYS"]))
    rows.append(_topo_row("NIC1", [*(["SYS"] * 4 + ["PIX"] * 4), "SYS", " X "]))
    legend = [
        "",
        "Legend:",
        "",
        "  X    = Self",
        "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes",
        "  PIX  = Connection traversing at most a single PCIe bridge",
        "  NV#  = Connection traversing a bonded set of # NVLinks",
        "",
        "NIC Legend:",
        "",
        "  NIC0: mlx5_0",
        "  NIC1: mlx5_1",
    ]
    return "\n".join(rows + legend) + "\n"


# SYNTHETIC, hand-written: modelled on `nvidia-smi nvlink -s` of an HGX H100 (18 links per
# GPU at 26.562 GB/s each, "GPU n: <name> (UUID: ...)" then tab-space-indented link lines).
# GPU 3 has links 16 and 17 down, printed as `<inactive>` the way nvidia-smi does.
def _hgx_nvlink(inactive: dict[int, set[int]] | None = None) -> str:
    inactive = inactive if inactive is not None else {3: {16, 17}}
    lines = []
    for i in range(8):
        lines.append(f"GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-00000000000{i})")
        for link in range(18):
            state = "<inactive>" if link in inactive.get(i, set()) else "26.562 GB/s"
            lines.append(f"\t Link {link}: {state}")
    return "\n".join(lines) + "\n"


class FakeSource:
    """A Source whose commands answer from a dict; anything else is rc 127 (not installed)."""

    def __init__(self, outputs: dict[tuple[str, ...], CommandOutput], files: dict[str, str] | None = None):
        self.description = "fake host"
        self.outputs = outputs
        self.files = files or {}

    def run(self, argv: Sequence[str]) -> CommandOutput:
        return self.outputs.get(tuple(argv), CommandOutput(rc=RC_NOT_FOUND, stdout="", stderr="not found"))

    def read(self, path: str) -> str | None:
        return self.files.get(path)

    def listdir(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/"
        return sorted({p[len(prefix) :].split("/")[0] for p in self.files if p.startswith(prefix)})


# --- nvidia-smi -q -x and -q text: the real H200 capture -----------------------------------


def test_parse_nvidia_smi_xml_h200x1_reads_every_field(h200x1: Path) -> None:
    facts = parse_nvidia_smi_xml(_body(h200x1, "nvidia-smi-q.xml"))
    assert (facts["driver_version"], facts["cuda_version"], facts["count"]) == ("580.159.04", "13.0", 1)
    assert facts["nvswitch"] is False
    gpu = facts["gpus"][0]
    assert gpu["index"] == 0
    assert gpu["name"] == "NVIDIA H200"
    assert gpu["architecture"] == "Hopper"
    assert gpu["uuid"] == H200_UUID
    assert gpu["serial"] == "1654924064277"
    assert gpu["bus_id"] == "0000:00:06.0"
    assert gpu["pci_device_id"] == "0x2335"
    assert gpu["vbios"] == "96.00.A5.00.1E"
    assert gpu["memory_total_mib"] == 143771
    assert gpu["pcie"] == {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16}
    assert (gpu["persistence_mode"], gpu["mig_mode"], gpu["ecc_mode"]) == (True, False, True)
    assert gpu["ecc_errors"] == {
        "volatile_corrected": 0,
        "volatile_uncorrected": 0,
        "aggregate_corrected": 0,
        "aggregate_uncorrected": 0,
    }
    assert gpu["remapped_rows"] == {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False}
    assert gpu["retired_pages"] == {"single_bit": None, "double_bit": None, "pending": None}
    assert gpu["recovery_action"] == "None"
    assert gpu["clocks_event_reasons"] == ["idle"]


def test_parse_nvidia_smi_text_h200x1_matches_xml(h200x1: Path) -> None:
    text = parse_nvidia_smi_text(_body(h200x1, "nvidia-smi-q.txt"))
    xml = parse_nvidia_smi_xml(_body(h200x1, "nvidia-smi-q.xml"))
    assert text["gpus"][0]["memory_total_mib"] == 143771
    assert text["gpus"][0]["remapped_rows"]["pending"] is False
    assert text == xml


# --- nvidia-smi -q text: public 8-GPU captures --------------------------------------------


def test_parse_nvidia_smi_text_h100x8_reads_eight_gpus(public: Path) -> None:
    facts = parse_nvidia_smi_text((public / H100X8).read_text())
    assert (facts["driver_version"], facts["cuda_version"], facts["count"]) == ("535.161.08", "12.2", 8)
    # Fabric State "Completed": the GPUs are registered with fabric manager (NVSwitch).
    assert facts["nvswitch"] is True
    assert {gpu["name"] for gpu in facts["gpus"]} == {"NVIDIA H100 80GB HBM3"}
    assert [gpu["bus_id"] for gpu in facts["gpus"]] == [
        "0000:19:00.0",
        "0000:3b:00.0",
        "0000:4c:00.0",
        "0000:5d:00.0",
        "0000:9b:00.0",
        "0000:bb:00.0",
        "0000:cb:00.0",
        "0000:db:00.0",
    ]
    first = facts["gpus"][0]
    assert first["uuid"] == "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa"
    assert first["serial"] == "1650124031592"
    assert first["pci_device_id"] == "0x2330"
    assert first["vbios"] == "96.00.74.00.0D"
    assert all(gpu["memory_total_mib"] == 81559 for gpu in facts["gpus"])
    assert all(
        gpu["pcie"] == {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16}
        for gpu in facts["gpus"]
    )
    assert first["ecc_mode"] is True
    assert first["ecc_errors"]["aggregate_uncorrected"] == 0
    assert first["remapped_rows"] == {
        "correctable": 0,
        "uncorrectable": 0,
        "pending": False,
        "failure": False,
    }
    # 535 prints "GPU Reset Status", not "GPU Recovery Action" (added in 550).
    assert first["recovery_action"] is None
    assert first["clocks_event_reasons"] == ["hw_slowdown", "hw_power_brake_slowdown"]


def test_parse_nvidia_smi_text_rtx4090x8_gives_null_for_na(public: Path) -> None:
    facts = parse_nvidia_smi_text((public / RTX4090X8).read_text())
    assert facts["count"] == 8
    assert facts["nvswitch"] is False
    assert {gpu["name"] for gpu in facts["gpus"]} == {"NVIDIA GeForce RTX 4090"}
    first = facts["gpus"][0]
    assert first["architecture"] == "Ada Lovelace"
    assert first["mig_mode"] is None  # MIG Mode Current: N/A
    assert first["serial"] is None  # Serial Number: N/A
    assert first["ecc_mode"] is False
    assert set(first["ecc_errors"].values()) == {None}  # every ECC counter N/A
    assert first["memory_total_mib"] == 24564
    assert first["pcie"] == {"gen_current": 4, "gen_max": 4, "width_current": 16, "width_max": 16}


def test_parse_nvidia_smi_text_truncated_raises_with_both_counts(public: Path) -> None:
    text = (public / H100X8).read_text()
    # Edit: cut the paste just before the 8th GPU section (bus 0000:db:00.0).
    truncated = text[: text.index("GPU 00000000:DB:00.0")]
    with pytest.raises(FactsError, match=r"nvidia-smi -q: 'Attached GPUs: 8' but 7 GPU sections"):
        parse_nvidia_smi_text(truncated)


def test_parse_nvidia_smi_text_section_without_product_name_raises(h200x1: Path) -> None:
    # Edit: drop the Product Name line of the only GPU section.
    text = "".join(
        line
        for line in _body(h200x1, "nvidia-smi-q.txt").splitlines(keepends=True)
        if "Product Name" not in line
    )
    with pytest.raises(FactsError, match=r"nvidia-smi -q: GPU 00000000:00:06.0 has no Product Name"):
        parse_nvidia_smi_text(text)


def test_parse_nvidia_smi_text_cut_mid_section_raises(h200x1: Path) -> None:
    text = _body(h200x1, "nvidia-smi-q.txt")
    # Edit: cut the paste in the middle of the GPU section, before "FB Memory Usage".
    with pytest.raises(FactsError, match="no FB Memory Usage total"):
        parse_nvidia_smi_text(text[: text.index("    FB Memory Usage")])


def test_parse_nvidia_smi_text_unrelated_text_raises() -> None:
    with pytest.raises(FactsError, match="not nvidia-smi -q output"):
        parse_nvidia_smi_text("No devices were found\n")


def test_parse_nvidia_smi_xml_broken_raises(h200x1: Path) -> None:
    xml = _body(h200x1, "nvidia-smi-q.xml")
    # Edit: keep only the first half of the XML document (closing tags lost).
    with pytest.raises(FactsError, match=r"nvidia-smi -q -x: XML does not parse"):
        parse_nvidia_smi_xml(xml[: len(xml) // 2])


def test_parse_nvidia_smi_xml_attached_mismatch_raises(h200x1: Path) -> None:
    # Edit: claim two attached GPUs while the document holds one <gpu>.
    xml = _body(h200x1, "nvidia-smi-q.xml").replace(
        "<attached_gpus>1</attached_gpus>", "<attached_gpus>2</attached_gpus>"
    )
    with pytest.raises(FactsError, match=r"'Attached GPUs: 2' but 1 GPU sections"):
        parse_nvidia_smi_xml(xml)


def test_parse_nvidia_smi_xml_other_document_raises() -> None:
    with pytest.raises(FactsError, match="expected <nvidia_smi_log>"):
        parse_nvidia_smi_xml("<html><body/></html>")


# --- nvidia-smi topo -m --------------------------------------------------------------------


def test_parse_topo_matrix_h200x1_strips_ansi_and_reads_affinity(h200x1: Path) -> None:
    topo = parse_topo_matrix(_body(h200x1, "nvidia-smi-topo-m.txt"))
    assert topo == {
        "gpus": ["GPU0"],
        "links": {"GPU0": {}},
        "nics": [],
        "nic_names": {},
        "affinity": {"GPU0": {"cpu_affinity": "0-15", "numa_node": 0}},
    }


def test_parse_topo_matrix_hgx_reads_nv18_mesh_and_nics() -> None:
    topo = parse_topo_matrix(_hgx_topo())
    assert topo["gpus"] == _GPUS8
    assert topo["nics"] == ["NIC0", "NIC1"]
    assert topo["nic_names"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    assert all(topo["links"][a][b] == "NV18" for a in _GPUS8 for b in _GPUS8 if a != b)
    assert "GPU0" not in topo["links"]["GPU0"]  # X (self) omitted
    assert topo["links"]["GPU0"]["NIC0"] == "PIX"
    assert topo["links"]["GPU7"]["NIC0"] == "SYS"
    assert topo["links"]["NIC1"] == {
        **{g: "SYS" for g in _GPUS8[:4]},
        **{g: "PIX" for g in _GPUS8[4:]},
        "NIC0": "SYS",
    }
    assert topo["affinity"]["GPU0"] == {"cpu_affinity": "0-55,112-167", "numa_node": 0}
    assert topo["affinity"]["GPU5"] == {"cpu_affinity": "56-111,168-223", "numa_node": 1}


def test_parse_topo_matrix_missing_row_raises() -> None:
    # Edit: drop the GPU7 row, as a paste cut short would.
    text = "\n".join(line for line in _hgx_topo().splitlines() if not line.startswith("GPU7\t"))
    with pytest.raises(FactsError, match=r"nvidia-smi topo -m: no row for GPU7"):
        parse_topo_matrix(text)


def test_parse_topo_matrix_short_row_raises() -> None:
    # Edit: cut the GPU2 row after its fourth column.
    lines = [
        "\t".join(line.split("\t")[:5]) if line.startswith("GPU2\t") else line
        for line in _hgx_topo().splitlines()
    ]
    with pytest.raises(FactsError, match="row GPU2 has 4 columns, expected 10"):
        parse_topo_matrix("\n".join(lines))


def test_parse_topo_matrix_no_header_raises() -> None:
    with pytest.raises(FactsError, match="no header row"):
        parse_topo_matrix("Failed to initialize NVML: Driver/library version mismatch\n")


# --- nvidia-smi nvlink -s ------------------------------------------------------------------


def test_parse_nvlink_status_h200x1_empty_means_no_links(h200x1: Path) -> None:
    assert parse_nvlink_status(_body(h200x1, "nvidia-smi-nvlink-s.txt")) == {}


def test_parse_nvlink_status_hgx_reads_active_and_inactive_links() -> None:
    links = parse_nvlink_status(_hgx_nvlink())
    assert sorted(links) == list(range(8))
    assert all(len(gpu_links) == 18 for gpu_links in links.values())
    assert links[0][0] == {"link": 0, "speed_gbps": 26.562, "active": True}
    assert links[3][16] == {"link": 16, "speed_gbps": None, "active": False}
    assert sum(link["active"] for link in links[3]) == 16


def test_parse_nvlink_status_link_before_gpu_raises() -> None:
    with pytest.raises(FactsError, match="before any 'GPU n:' line"):
        parse_nvlink_status("\t Link 0: 26.562 GB/s\n")


def test_parse_nvlink_status_garbage_line_raises() -> None:
    # Edit: a link line whose rate has been cut off mid-number.
    text = _hgx_nvlink().replace("\t Link 5: 26.562 GB/s", "\t Link 5: 26.5", 1)
    with pytest.raises(FactsError, match=r"nvidia-smi nvlink -s: line 7 does not parse"):
        parse_nvlink_status(text)


# --- PCI scan --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("speed", "gen"),
    [
        ("2.5 GT/s PCIe", 1),
        ("5.0 GT/s PCIe", 2),
        ("8.0 GT/s PCIe", 3),
        ("16.0 GT/s PCIe", 4),
        ("32.0 GT/s PCIe\n", 5),
        ("64.0 GT/s PCIe", 6),
        ("8 GT/s", 3),
        ("Unknown", None),
        ("", None),
        (None, None),
    ],
)
def test_pcie_gen_maps_sysfs_speed_to_generation(speed: str | None, gen: int | None) -> None:
    assert pcie_gen(speed) == gen


@pytest.mark.parametrize(
    ("bus_id", "expected"),
    [
        ("00000000:19:00.0", "0000:19:00.0"),
        ("00000000:DB:00.0", "0000:db:00.0"),
        ("0000:00:06.0", "0000:00:06.0"),
    ],
)
def test_normalize_bus_id_gives_sysfs_form(bus_id: str, expected: str) -> None:
    assert normalize_bus_id(bus_id) == expected


def test_scan_pci_gpus_h200x1_finds_one_gpu(h200x1: Path) -> None:
    gpus = scan_pci_gpus(CaptureSource(h200x1))
    assert len(gpus) == 1  # the Intel host bridge 0000:00:00.0 is skipped
    gpu = gpus[0]
    assert (gpu["index"], gpu["bus_id"], gpu["pci_device_id"], gpu["name"]) == (
        0,
        "0000:00:06.0",
        "0x2335",
        "NVIDIA 0x2335",
    )
    assert gpu["pcie"] == {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16}
    assert gpu["numa_node"] is None  # sysfs numa_node is -1 in this VM
    assert gpu["cpu_affinity"] == "0-15"
    assert (gpu["uuid"], gpu["vbios"], gpu["memory_total_mib"], gpu["ecc_errors"]) == (None, None, None, None)


# --- gather_gpu ------------------------------------------------------------------------------


def test_gather_gpu_h200x1_uses_xml_topo_and_nvlink(h200x1: Path) -> None:
    facts = gather_gpu(CaptureSource(h200x1))
    assert facts["available"] is True
    assert facts["source"] == "nvidia-smi-xml"
    assert facts["driver_loaded"] is True
    assert facts["sources"] == ["nvidia-smi -q -x", "nvidia-smi topo -m", "nvidia-smi nvlink -s"]
    assert facts["count"] == 1
    gpu = facts["gpus"][0]
    assert gpu["uuid"] == H200_UUID
    assert (gpu["numa_node"], gpu["cpu_affinity"]) == (0, "0-15")
    assert (gpu["nvlinks"], gpu["nvlink_source"]) == ([], "nvidia-smi nvlink -s")
    assert facts["topology"] == {"gpus": ["GPU0"], "links": {"GPU0": {}}, "nics": [], "nic_names": {}}
    assert facts["nvswitch"] is False


def test_gather_gpu_without_xml_falls_back_to_text(h200x1: Path, tmp_path: Path) -> None:
    capture = _copy(h200x1, tmp_path)
    # Edit: the capture lacks the XML file (as an old capture or a ticket paste would).
    (capture / "nvidia-smi-q.xml").unlink()
    facts = gather_gpu(CaptureSource(capture))
    assert facts["source"] == "nvidia-smi-text"
    assert facts["sources"][0] == "nvidia-smi -q"
    assert facts["gpus"] == gather_gpu(CaptureSource(h200x1))["gpus"]


def test_gather_gpu_nvidia_smi_missing_with_sysfs_scans_pci(h200x1: Path, tmp_path: Path) -> None:
    capture = _copy(h200x1, tmp_path)
    _remove_nvidia_smi(capture)
    facts = gather_gpu(CaptureSource(capture))
    assert facts["available"] is True
    assert facts["source"] == "pci-scan"
    assert facts["driver_loaded"] is False
    assert facts["reason"].startswith("nvidia-smi not found")
    assert facts["driver_version"] is None and facts["topology"] is None
    assert facts["count"] == 1
    assert facts["gpus"][0]["bus_id"] == "0000:00:06.0"
    assert facts["gpus"][0]["name"] == "NVIDIA 0x2335"


def test_gather_gpu_nvidia_smi_missing_no_pci_gpu_is_unavailable(h200x1: Path, tmp_path: Path) -> None:
    capture = _copy(h200x1, tmp_path)
    _remove_nvidia_smi(capture)
    # Edit: remove the GPU from the sysfs mirror; only the Intel host bridge stays.
    shutil.rmtree(capture / "sys/bus/pci/devices/0000:00:06.0")
    facts = gather_gpu(CaptureSource(capture))
    assert facts["available"] is False
    assert facts["source"] == "none"
    assert facts["reason"] == "nvidia-smi not found and no NVIDIA PCI devices in sysfs"
    assert (facts["count"], facts["gpus"]) == (0, [])


def test_gather_gpu_driver_failure_reports_the_error() -> None:
    # nvidia-smi installed but the kernel module is not loaded: rc 9 and NVML's message.
    failing = CommandOutput(
        rc=9, stdout="NVIDIA-SMI has failed because it couldn't communicate with the driver.\n"
    )
    facts = gather_gpu(FakeSource({("nvidia-smi", "-q", "-x"): failing, ("nvidia-smi", "-q"): failing}))
    assert facts["available"] is False
    assert facts["reason"].startswith("nvidia-smi failed (rc=9: NVIDIA-SMI has failed")


def test_gather_gpu_truncated_text_raises_naming_the_source(public: Path) -> None:
    text = (public / H100X8).read_text()
    # Edit: cut the output just before the 8th GPU section.
    source = FakeSource({("nvidia-smi", "-q"): CommandOutput(0, text[: text.index("GPU 00000000:DB:00.0")])})
    with pytest.raises(FactsError, match=r"^fake host: nvidia-smi -q: 'Attached GPUs: 8' but 7"):
        gather_gpu(source)


def test_gather_gpu_broken_capture_file_raises_facts_error(h200x1: Path, tmp_path: Path) -> None:
    capture = _copy(h200x1, tmp_path)
    # Edit: drop the "# rc=0" footer, as an interrupted `gpurack capture` would.
    xml = capture / "nvidia-smi-q.xml"
    xml.write_text(xml.read_text().rsplit("# rc=", 1)[0])
    with pytest.raises(FactsError, match=r"nvidia-smi-q\.xml: last line must be"):
        gather_gpu(CaptureSource(capture))


def test_gather_gpu_hgx_text_topo_nvlink_sets_nvswitch(public: Path) -> None:
    source = FakeSource(
        {
            ("nvidia-smi", "-q"): CommandOutput(0, (public / H100X8).read_text()),
            ("nvidia-smi", "topo", "-m"): CommandOutput(0, _hgx_topo()),
            ("nvidia-smi", "nvlink", "-s"): CommandOutput(0, _hgx_nvlink()),
        }
    )
    facts = gather_gpu(source)
    assert facts["source"] == "nvidia-smi-text"
    assert facts["nvswitch"] is True
    assert facts["topology"]["nic_names"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    assert "affinity" not in facts["topology"]
    gpus = facts["gpus"]
    assert [gpu["numa_node"] for gpu in gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert [sum(link["active"] for link in gpu["nvlinks"]) for gpu in gpus] == [
        18,
        18,
        18,
        16,
        18,
        18,
        18,
        18,
    ]


def test_gather_gpu_pcie_box_without_fabric_or_mesh_is_not_nvswitch(public: Path) -> None:
    # nvlink -s prints nothing on GPUs without NVLink (RTX 4090); no topo -m in this fake.
    source = FakeSource(
        {
            ("nvidia-smi", "-q"): CommandOutput(0, (public / RTX4090X8).read_text()),
            ("nvidia-smi", "nvlink", "-s"): CommandOutput(0, ""),
        }
    )
    facts = gather_gpu(source)
    assert facts["nvswitch"] is False
    assert facts["topology"] is None
    assert all(gpu["nvlinks"] == [] for gpu in facts["gpus"])


def test_gather_gpu_topo_gpu_count_mismatch_raises(public: Path) -> None:
    # Edit: topo -m of the 1-GPU H200 against the 8-GPU nvidia-smi -q.
    topo = "\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-15\t0\n"
    source = FakeSource(
        {
            ("nvidia-smi", "-q"): CommandOutput(0, (public / H100X8).read_text()),
            ("nvidia-smi", "topo", "-m"): CommandOutput(0, topo),
        }
    )
    with pytest.raises(FactsError, match="1 GPU rows but nvidia-smi -q lists 8 GPUs"):
        gather_gpu(source)
