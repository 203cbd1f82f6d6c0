"""Inputs the GPU facts tests share: capture copies, a fake command source, and synthetic
8-GPU HGX topo/nvlink output."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    RC_NOT_FOUND,
    CommandOutput,
    parse_capture_file,
)

H100X8 = "nvidia-smi-q.535.161.08.h100x8"
RTX4090X8 = "nvidia-smi-q.535.154.05.rtx4090x8"
H200_UUID = "GPU-cf8daf37-ddce-01b6-79fe-9e7477c494b0"
NVIDIA_SMI_FILES = (
    "nvidia-smi-q.xml",
    "nvidia-smi-q.txt",
    "nvidia-smi-topo-m.txt",
    "nvidia-smi-nvlink-s.txt",
)


def capture_text(capture: Path, name: str) -> str:
    """The command output held in one capture file (frame removed)."""
    return parse_capture_file((capture / name).read_text(), name=name)[1].stdout


def writable_capture(capture: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "capture"
    shutil.copytree(capture, dest)
    dest.chmod(0o755)
    for path in dest.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return dest


def remove_nvidia_smi(capture: Path) -> None:
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
GPUS8 = [f"GPU{i}" for i in range(8)]


def topo_row(name: str, cells: Sequence[str], affinity: str = "") -> str:
    return "\t".join([name, *cells]) + affinity


def hgx_topo() -> str:
    header = "\t\x1b[4m" + "\t".join([*GPUS8, "NIC0", "NIC1", "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"])
    rows = [header + "\x1b[0m"]
    for i, gpu in enumerate(GPUS8):
        cells = [" X " if j == i else "NV18" for j in range(8)]
        cells += ["PIX" if i < 4 else "SYS", "SYS" if i < 4 else "PIX"]
        cpus, numa = ("0-55,112-167", "0") if i < 4 else ("56-111,168-223", "1")
        rows.append(topo_row(gpu, cells, f"\t{cpus}\t{numa}\t\tN/A"))
    rows.append(topo_row("NIC0", [*(["PIX"] * 4 + ["SYS"] * 4), " X ", "SYS"]))
    rows.append(topo_row("NIC1", [*(["SYS"] * 4 + ["PIX"] * 4), "SYS", " X "]))
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
def hgx_nvlink(inactive: dict[int, set[int]] | None = None) -> str:
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
