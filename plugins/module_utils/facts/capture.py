# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Capture bundle format: one file per command, `# $ cmd` first line, `# rc=N` last line.

Pure functions only (stdlib), shared by the facts modules, the lab, the driver
(`gpurack capture`) and the capture role (through the capture_commands and sysfs_mirror
modules). The tables below are the single list of what a capture holds;
`docs/capture-format.md` describes it for operators.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import CaptureError, excerpt

# rc 127 is what a shell returns for "command not found"; captures keep it as a fact.
RC_NOT_FOUND = 127

_HEADER = re.compile(r"^# \$ (?P<cmd>.*)$")
# An exit code is small; a 5000-digit one is no footer (and int() would refuse it).
_FOOTER = re.compile(r"^# rc=(?P<rc>-?\d{1,10})\s*$")


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

# Plain files copied verbatim (no header), by their name in the bundle.
CAPTURE_FILES: tuple[str, ...] = ("os-release",)

# Where each plain file comes from, relative to the node's root; the first that exists wins
# (os-release(5) order).
CAPTURE_FILE_ORIGINS: dict[str, tuple[str, ...]] = {"os-release": ("etc/os-release", "usr/lib/os-release")}


@dataclass(frozen=True)
class SysfsTree:
    """A sysfs glob mirrored under `sys/`, with how many folder levels below each match are kept."""

    glob: str
    depth: int


# Attributes the gatherers read sit at these depths (infiniband: ports/1/counters/<name>;
# block: queue/rotational; PCI devices, NUMA nodes and the cgroup root: top level only).
CAPTURE_SYSFS: tuple[SysfsTree, ...] = (
    SysfsTree("sys/bus/pci/devices/*", 0),
    SysfsTree("sys/class/infiniband/*", 3),
    SysfsTree("sys/class/net/*", 1),
    SysfsTree("sys/class/block/*", 1),
    SysfsTree("sys/class/nvme/*", 1),
    SysfsTree("sys/devices/system/node/node*", 0),
    SysfsTree("sys/fs/cgroup", 0),
    SysfsTree("sys/module/nouveau", 1),
    SysfsTree("sys/module/nvidia", 1),
    SysfsTree("sys/module/nvidia_peermem", 1),
)

# sysfs trees mirrored under `sys/` in a capture (attributes only, no symlinks followed).
CAPTURE_SYSFS_GLOBS: tuple[str, ...] = tuple(tree.glob for tree in CAPTURE_SYSFS)

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


Runner = Callable[[Sequence[str]], CommandOutput]


def not_found(tool: str) -> CommandOutput:
    """What a shell records for a tool that is not installed (rc 127), as every capture does."""
    return CommandOutput(rc=RC_NOT_FOUND, stdout="", stderr=f"sh: {tool}: command not found\n")


class CaptureFormatError(CaptureError):
    """A capture file does not have the `# $ cmd` ... `# rc=N` frame."""


def parse_capture_file(text: str, name: str = "capture") -> tuple[str, CommandOutput]:
    """Split a capture file into (command line, output).

    Raises:
        CaptureFormatError: the header or the rc footer is missing (a truncated file).
    """
    lines = text.splitlines()
    if not lines or not (header := _HEADER.match(lines[0])):
        found = excerpt(lines[0]) if lines else "an empty file"
        raise CaptureFormatError(f"{name}: first line must be '# $ <command>', found {found}")
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


def command_line(cmd: CaptureCommand) -> str:
    """The `# $` header of a command: its argv joined by spaces, unquoted like the real captures."""
    return " ".join(cmd.argv)


@dataclass(frozen=True)
class CapturedCommand:
    """One command run for a bundle: its entry, what it returned, how long it took and its file text."""

    command: CaptureCommand
    output: CommandOutput
    seconds: float

    @property
    def text(self) -> str:
        """The file's content in the capture format."""
        return format_capture_file(command_line(self.command), self.output)


def run_capture_command(cmd: CaptureCommand, runner: Runner) -> CapturedCommand:
    """Run one capture command through `runner` (which reports a missing tool as rc 127)."""
    start = time.monotonic()
    output = runner(cmd.argv)
    return CapturedCommand(command=cmd, output=output, seconds=round(time.monotonic() - start, 3))


def read_plain_file(root: Path, name: str) -> bytes | None:
    """Bytes of one CAPTURE_FILES entry from its first existing origin below root, None when absent."""
    for origin in CAPTURE_FILE_ORIGINS.get(name, (f"etc/{name}",)):
        try:
            return (root / origin).read_bytes()
        except OSError:
            continue
    return None
