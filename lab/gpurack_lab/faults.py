"""Hardware faults a lab worker can be given: pure edits of a COPY of its capture profile.

Each fault changes every source the facts modules read for that component (nvidia-smi
XML and text, topo, nvlink, -L; lspci; sysfs; ibstat), so the gatherers agree with each
other and the preflight check sees one consistent broken machine.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    CommandOutput,
    format_capture_file,
    parse_capture_file,
)
from gpurack.errors import UsageError

FaultKind = Literal["gpu-missing", "ib-port-down", "pcie-downgraded"]
FAULT_KINDS: tuple[FaultKind, ...] = ("gpu-missing", "ib-port-down", "pcie-downgraded")


class FaultError(UsageError):
    """A fault does not apply to the profile it was given (e.g. ib-port-down without an HCA)."""


@dataclass(frozen=True, slots=True)
class Fault:
    """One injected fault: what breaks, on which lab host."""

    kind: FaultKind
    host: str

    def __str__(self) -> str:
        return f"{self.kind}@{self.host}"


def parse_fault(spec: str) -> Fault:
    """Parse `KIND@HOST` (e.g. `gpu-missing@lab-w2`).

    Raises:
        UsageError: not KIND@HOST, or an unknown kind.
    """
    kind, sep, host = spec.partition("@")
    if not sep or not host:
        raise UsageError(f"fault {spec!r}: expected KIND@HOST, e.g. gpu-missing@lab-w1")
    for known in FAULT_KINDS:
        if kind == known:
            return Fault(known, host)
    raise UsageError(f"fault {spec!r}: unknown kind {kind!r} (known: {', '.join(FAULT_KINDS)})")


# --- nvidia-smi -q (text) ---------------------------------------------------------------

_GPU_HEADER = re.compile(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$", re.M)
_ATTACHED = re.compile(r"^(Attached GPUs\s*:\s*)(\d+)", re.M)


def smi_text_drop_last_gpu(text: str) -> tuple[str, str]:
    """Drop the last `GPU <bus id>` section and decrement `Attached GPUs`; return (text, bus id).

    Raises:
        FaultError: no GPU section.
    """
    headers = list(_GPU_HEADER.finditer(text))
    if not headers:
        raise FaultError("gpu-missing: the profile's nvidia-smi -q lists no GPU")
    last = headers[-1]
    bus_id = last.group(0).split()[1]
    # The last section runs to the end of the output (a trailing blank line stays).
    edited = text[: last.start()].rstrip("\n") + "\n\n"
    edited = _ATTACHED.sub(lambda m: f"{m.group(1)}{int(m.group(2)) - 1}", edited, count=1)
    return edited, bus_id


_LINK_WIDTH_CURRENT = re.compile(r"(Link Width\s*\n\s*Max\s*:\s*\d+x\s*\n\s*Current\s*:\s*)16x")


def smi_text_narrow_link(text: str, index: int) -> tuple[str, str]:
    """Set GPU `index`'s current PCIe link width from 16x to 8x; return (text, bus id).

    Raises:
        FaultError: no such GPU, or its link is not x16.
    """
    headers = list(_GPU_HEADER.finditer(text))
    if index >= len(headers):
        raise FaultError(f"pcie-downgraded: nvidia-smi -q lists {len(headers)} GPUs, no GPU {index}")
    start = headers[index].start()
    end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
    section, count = _LINK_WIDTH_CURRENT.subn(r"\g<1>8x", text[start:end], count=1)
    if not count:
        raise FaultError("pcie-downgraded: the GPU's current link width is not 16x in nvidia-smi -q")
    return text[:start] + section + text[end:], headers[index].group(0).split()[1]


# --- nvidia-smi -q -x -------------------------------------------------------------------

_XML_GPU = re.compile(r'[ \t]*<gpu id="(?P<bus>[^"]+)">.*?</gpu>\n?', re.S)
_XML_ATTACHED = re.compile(r"<attached_gpus>(\d+)</attached_gpus>")
_XML_WIDTH = re.compile(r"(<current_link_width>)16x(</current_link_width>)")


def smi_xml_drop_last_gpu(xml: str) -> str:
    """The XML without its last <gpu> element and with <attached_gpus> decremented."""
    gpus = list(_XML_GPU.finditer(xml))
    if not gpus:
        raise FaultError("gpu-missing: the profile's nvidia-smi -q -x lists no GPU")
    last = gpus[-1]
    edited = xml[: last.start()] + xml[last.end() :]
    return _XML_ATTACHED.sub(
        lambda m: f"<attached_gpus>{int(m.group(1)) - 1}</attached_gpus>", edited, count=1
    )


def smi_xml_narrow_link(xml: str, index: int) -> str:
    """GPU `index`'s <current_link_width> from 16x to 8x."""
    gpus = list(_XML_GPU.finditer(xml))
    if index >= len(gpus):
        raise FaultError(f"pcie-downgraded: nvidia-smi -q -x lists {len(gpus)} GPUs, no GPU {index}")
    gpu = gpus[index]
    section, count = _XML_WIDTH.subn(r"\g<1>8x\g<2>", xml[gpu.start() : gpu.end()], count=1)
    if not count:
        raise FaultError("pcie-downgraded: the GPU's current link width is not 16x in nvidia-smi -q -x")
    return xml[: gpu.start()] + section + xml[gpu.end() :]


# --- other nvidia-smi views --------------------------------------------------------------


def smi_list_drop_last_gpu(text: str) -> str:
    """`nvidia-smi -L` without its last `GPU n:` line."""
    lines = text.splitlines(keepends=True)
    gpu_lines = [i for i, line in enumerate(lines) if line.startswith("GPU ")]
    if gpu_lines:
        del lines[gpu_lines[-1]]
    return "".join(lines)


def nvlink_drop_last_gpu(text: str) -> str:
    """`nvidia-smi nvlink -s` without the last `GPU n:` block."""
    starts = [m.start() for m in re.finditer(r"^GPU \d+:", text, re.M)]
    return text[: starts[-1]] if starts else text


def topo_drop_gpu(text: str, name: str) -> str:
    """`nvidia-smi topo -m` without GPU `name`'s row and column (legend untouched)."""
    lines = text.split("\n")
    header_i = next((i for i, line in enumerate(lines) if f"\t{name}\t" in f"\t{_plain(line)}\t"), None)
    if header_i is None:
        return text
    columns = [c.strip() for c in _plain(lines[header_i]).split("\t")]
    column = columns.index(name)
    out: list[str] = []
    for i, line in enumerate(lines):
        if i > header_i and _plain(line).split("\t", 1)[0].strip() == name:
            continue
        cells = line.split("\t")
        if (i >= header_i and len(cells) == len(columns) and cells[0].strip() != "") or i == header_i:
            del cells[column]
        out.append("\t".join(cells))
    return "\n".join(out)


def _plain(line: str) -> str:
    """A topo line without its ANSI underline codes."""
    return re.sub(r"\x1b\[[0-9;]*m", "", line)


# --- lspci -vvv ---------------------------------------------------------------------------


def lspci_drop_device(text: str, bus_id: str) -> str:
    """lspci -vvv without the block of `bus_id` (short form `19:00.0` or full `0000:19:00.0`)."""
    short = _short_bus(bus_id)
    blocks = re.split(r"(?<=\n)\n(?=\S)", text)
    return "\n".join(b for b in blocks if not b.lower().startswith((short, f"0000:{short}")))


def lspci_narrow_link(text: str, bus_id: str) -> tuple[str, bool]:
    """In `bus_id`'s block, LnkSta width x16 -> `Width x8 (downgraded)`; return (text, edited)."""
    short = _short_bus(bus_id)
    blocks = re.split(r"(?<=\n)\n(?=\S)", text)
    edited = False
    for i, block in enumerate(blocks):
        if block.lower().startswith((short, f"0000:{short}")):
            blocks[i], count = re.subn(
                r"(LnkSta:[^\n]*?)Width x16 \(ok\)", r"\1Width x8 (downgraded)", block, count=1
            )
            edited = bool(count)
    return "\n".join(blocks), edited


def _short_bus(bus_id: str) -> str:
    """`00000000:19:00.0` or `0000:19:00.0` -> `19:00.0`, lower case."""
    return ":".join(bus_id.lower().split(":")[-2:])


def sysfs_bus(bus_id: str) -> str:
    """The sysfs name of a PCI bus id: `0000:19:00.0`."""
    return f"0000:{_short_bus(bus_id)}"


# --- ibstat -------------------------------------------------------------------------------


def ibstat_port_down(text: str, device: str) -> str:
    """`device`'s first port: State Down, Physical state Disabled.

    Raises:
        FaultError: no such CA in the ibstat output.
    """
    blocks = re.split(r"(?=^CA ')", text, flags=re.M)
    for i, block in enumerate(blocks):
        if block.startswith(f"CA '{device}'"):
            down = re.sub(r"(State:\s*)Active", r"\1Down", block, count=1)
            blocks[i] = re.sub(r"(Physical state:\s*)LinkUp", r"\1Disabled", down, count=1)
            return "".join(blocks)
    raise FaultError(f"ib-port-down: no CA {device!r} in the profile's ibstat")


# --- applying a fault to a profile folder ------------------------------------------------


def apply(fault: Fault, profile: Path) -> str:
    """Edit the profile folder in place for the fault; return what was broken, for the status.

    Raises:
        FaultError: the profile lacks the component the fault breaks.
    """
    if fault.kind == "gpu-missing":
        return _gpu_missing(profile)
    if fault.kind == "ib-port-down":
        return _ib_port_down(profile)
    return _pcie_downgraded(profile)


def _read(profile: Path, filename: str) -> tuple[str, CommandOutput] | None:
    """(command line, output) of a capture file that ran successfully, else None."""
    path = profile / filename
    if not path.is_file():
        return None
    command, output = parse_capture_file(path.read_text(encoding="utf-8"), name=str(path))
    return (command, output) if output.rc == 0 else None


def _write(profile: Path, filename: str, command: str, body: str) -> None:
    (profile / filename).write_text(format_capture_file(command, CommandOutput(rc=0, stdout=body)))


def _gpu_missing(profile: Path) -> str:
    text = _read(profile, "nvidia-smi-q.txt")
    xml = _read(profile, "nvidia-smi-q.xml")
    if text is None and xml is None:
        raise FaultError("gpu-missing: the profile has no nvidia-smi -q output (no GPU to lose)")
    bus_id = ""
    if text is not None:
        edited, bus_id = smi_text_drop_last_gpu(text[1].stdout)
        _write(profile, "nvidia-smi-q.txt", text[0], edited)
    if xml is not None:
        found = list(_XML_GPU.finditer(xml[1].stdout))
        bus_id = found[-1].group("bus") if found else bus_id
        _write(profile, "nvidia-smi-q.xml", xml[0], smi_xml_drop_last_gpu(xml[1].stdout))
    # Its index is the count left, so the other views drop GPU<count>.
    count_left = len(list(_GPU_HEADER.finditer(text[1].stdout))) - 1 if text else 0
    if xml is not None:
        count_left = len(list(_XML_GPU.finditer(xml[1].stdout))) - 1
    for filename, edit in (
        ("nvidia-smi-L.txt", smi_list_drop_last_gpu),
        ("nvidia-smi-nvlink-s.txt", nvlink_drop_last_gpu),
        ("nvidia-smi-topo-m.txt", lambda t: topo_drop_gpu(t, f"GPU{count_left}")),
    ):
        found_file = _read(profile, filename)
        if found_file is not None:
            _write(profile, filename, found_file[0], edit(found_file[1].stdout))
    # A GPU that fell off the bus is gone from lspci and sysfs too, so the PCI scan that
    # the GPU gatherer falls back on does not find it either.
    lspci = _read(profile, "lspci-vvv.txt")
    if lspci is not None:
        _write(profile, "lspci-vvv.txt", lspci[0], lspci_drop_device(lspci[1].stdout, bus_id))
    shutil.rmtree(profile / "sys" / "bus" / "pci" / "devices" / sysfs_bus(bus_id), ignore_errors=True)
    return f"GPU {sysfs_bus(bus_id)} missing"


def _ib_port_down(profile: Path) -> str:
    ib_root = profile / "sys" / "class" / "infiniband"
    devices = sorted(d.name for d in ib_root.iterdir()) if ib_root.is_dir() else []
    ibstat = _read(profile, "ibstat.txt")
    if not devices and ibstat is None:
        raise FaultError(
            "ib-port-down: the profile has no InfiniBand HCA (no ibstat, no sys/class/infiniband)"
        )
    if devices:
        device = devices[0]
        port = ib_root / device / "ports" / "1"
        (port / "state").write_text("1: DOWN\n")
        (port / "phys_state").write_text("3: Disabled\n")
    else:
        assert ibstat is not None
        match = re.search(r"^CA '([^']+)'", ibstat[1].stdout, re.M)
        if match is None:
            raise FaultError("ib-port-down: the profile's ibstat lists no CA")
        device = match.group(1)
    if ibstat is not None and f"CA '{device}'" in ibstat[1].stdout:
        _write(profile, "ibstat.txt", ibstat[0], ibstat_port_down(ibstat[1].stdout, device))
    return f"{device} port 1 down"


def _pcie_downgraded(profile: Path) -> str:
    text = _read(profile, "nvidia-smi-q.txt")
    xml = _read(profile, "nvidia-smi-q.xml")
    if text is None and xml is None:
        raise FaultError("pcie-downgraded: the profile has no nvidia-smi -q output")
    bus_id = ""
    if text is not None:
        edited, bus_id = smi_text_narrow_link(text[1].stdout, 0)
        _write(profile, "nvidia-smi-q.txt", text[0], edited)
    if xml is not None:
        found = list(_XML_GPU.finditer(xml[1].stdout))
        bus_id = found[0].group("bus") if found else bus_id
        _write(profile, "nvidia-smi-q.xml", xml[0], smi_xml_narrow_link(xml[1].stdout, 0))
    lspci = _read(profile, "lspci-vvv.txt")
    if lspci is not None:
        edited_lspci, _ = lspci_narrow_link(lspci[1].stdout, bus_id)
        _write(profile, "lspci-vvv.txt", lspci[0], edited_lspci)
    width = profile / "sys" / "bus" / "pci" / "devices" / sysfs_bus(bus_id) / "current_link_width"
    if width.is_file():
        width.write_text("8\n")
    return f"GPU {sysfs_bus(bus_id)} link x8"
