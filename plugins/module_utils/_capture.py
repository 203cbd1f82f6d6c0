# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Capture bundle format: one file per command, `# $ cmd` first line, `# rc=N` last line.

Pure functions only (stdlib), shared by the facts modules, the lab and the driver.
The table below is the single list of commands a capture holds; `docs/capture-format.md`
describes it for operators.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# rc 127 is what a shell returns for "command not found"; captures keep it as a fact.
RC_NOT_FOUND = 127

_HEADER = re.compile(r"^# \$ (?P<cmd>.*)$")
_FOOTER = re.compile(r"^# rc=(?P<rc>-?\d+)\s*$")


@dataclass(frozen=True)
class CaptureCommand:
    """One command of a capture bundle: its argv and the file that holds its output."""

    filename: str
    argv: tuple[str, ...]


# Order matters only for readability of `gpurack capture` progress.
CAPTURE_COMMANDS: tuple[CaptureCommand, ...] = (
    CaptureCommand("nvidia-smi-q.xml", ("nvidia-smi", "-q", "-x")),
    CaptureCommand("nvidia-smi-q.txt", ("nvidia-smi", "-q")),
    CaptureCommand("nvidia-smi-topo-m.txt", ("nvidia-smi", "topo", "-m")),
    CaptureCommand("nvidia-smi-nvlink-s.txt", ("nvidia-smi", "nvlink", "-s")),
    CaptureCommand("nvidia-smi-L.txt", ("nvidia-smi", "-L")),
    CaptureCommand("lspci-vvv.txt", ("lspci", "-vvv")),
    CaptureCommand("lspci-nn.txt", ("lspci", "-nn")),
    CaptureCommand("ibstat.txt", ("ibstat",)),
    CaptureCommand("nvme-list.json", ("nvme", "list", "-o", "json")),
    CaptureCommand("lsblk.json", ("lsblk", "-J", "-O")),
    CaptureCommand("lscpu.json", ("lscpu", "-J")),
    CaptureCommand("lsmod.txt", ("lsmod",)),
    CaptureCommand("uname.txt", ("uname", "-a")),
    CaptureCommand("dmesg-nvrm.txt", ("sh", "-c", 'dmesg | grep -iE "nvrm|xid|nvidia" | tail -200')),
    CaptureCommand("mokutil-sb-state.txt", ("mokutil", "--sb-state")),
    CaptureCommand(
        "systemctl-is-active.txt",
        ("systemctl", "is-active", "nvidia-fabricmanager", "nvidia-persistenced", "containerd", "kubelet"),
    ),
)

# Plain files copied verbatim (no header), relative to the capture root.
CAPTURE_FILES: tuple[str, ...] = ("os-release",)

# sysfs trees mirrored under `sys/` in a capture (attributes only, no symlinks followed).
CAPTURE_SYSFS_GLOBS: tuple[str, ...] = (
    "sys/bus/pci/devices/*",
    "sys/class/infiniband/*",
    "sys/class/net/*",
    "sys/class/block/*",
    "sys/class/nvme/*",
    "sys/devices/system/node/node*",
    "sys/fs/cgroup",
    "sys/module/nouveau",
    "sys/module/nvidia",
    "sys/module/nvidia_peermem",
)

_BY_ARGV = {c.argv: c for c in CAPTURE_COMMANDS}


def command_for(argv: tuple[str, ...] | list[str]) -> CaptureCommand | None:
    """Return the capture entry for an argv, or None when captures do not hold it."""
    return _BY_ARGV.get(tuple(argv))


@dataclass(frozen=True)
class CommandOutput:
    """What one command printed: its rc and stdout (stderr is folded in by captures)."""

    rc: int
    stdout: str
    stderr: str = ""

    @property
    def missing(self) -> bool:
        """True when the tool was not installed (rc 127)."""
        return self.rc == RC_NOT_FOUND


class CaptureFormatError(ValueError):
    """A capture file does not have the `# $ cmd` ... `# rc=N` frame."""


def parse_capture_file(text: str, name: str = "capture") -> tuple[str, CommandOutput]:
    """Split a capture file into (command line, output).

    Raises:
        CaptureFormatError: the header or the rc footer is missing (a truncated file).
    """
    lines = text.splitlines()
    if not lines or not (header := _HEADER.match(lines[0])):
        raise CaptureFormatError(f"{name}: first line must be '# $ <command>', found {lines[:1]!r}")
    # Trailing blank lines are tolerated; the footer must be the last non-blank line.
    while len(lines) > 1 and not lines[-1].strip():
        lines.pop()
    footer = _FOOTER.match(lines[-1]) if len(lines) > 1 else None
    if footer is None:
        raise CaptureFormatError(f"{name}: last line must be '# rc=<exit code>' (file truncated?)")
    body = "\n".join(lines[1:-1])
    if body:
        body += "\n"
    return header.group("cmd"), CommandOutput(rc=int(footer.group("rc")), stdout=body)


def format_capture_file(command_line: str, output: CommandOutput) -> str:
    """Render one command's output in the capture format."""
    body = output.stdout
    if output.stderr:
        body += output.stderr
    if body and not body.endswith("\n"):
        body += "\n"
    return f"# $ {command_line}\n{body}# rc={output.rc}\n"
