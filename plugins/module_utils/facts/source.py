# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Where facts come from: a live machine or a capture bundle, behind one small interface.

Gatherers take a `Source` and never touch subprocess or the filesystem themselves, so the
same code reads a node (Ansible module, `gpurack capture`) and a capture (`--from-capture`,
tests, the lab's sysfs replay through the modules' `root` parameter).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import CaptureError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    CAPTURE_COMMANDS,
    RC_NOT_FOUND,
    CommandOutput,
    Runner,
    command_for,
    parse_capture_file,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture_reader import CaptureReader

__all__ = [
    "CaptureError",
    "CaptureSource",
    "LiveSource",
    "Runner",
    "Source",
    "is_capture_dir",
    "open_source",
    "source_warnings",
]


class Source(Protocol):
    """Read-only view of one node."""

    description: str

    def run(self, argv: Sequence[str]) -> CommandOutput:
        """Run (or replay) a command; rc 127 when the tool is absent."""

    def read(self, path: str) -> str | None:
        """Text of a file relative to the node's root (`sys/...`), None when absent."""

    def listdir(self, path: str) -> list[str]:
        """Sorted entries of a directory relative to the root, [] when absent."""


class LiveSource:
    """A running machine: commands through `runner`, files below `root` (default `/`), links followed."""

    def __init__(self, runner: Runner, root: str | os.PathLike[str] = "/") -> None:
        self.root = Path(root)
        self._runner = runner
        self.description = f"live host (root {self.root})"

    def run(self, argv: Sequence[str]) -> CommandOutput:
        return self._runner(argv)

    def read(self, path: str) -> str | None:
        try:
            return (self.root / path.lstrip("/")).read_text(encoding="utf-8", errors="replace")
        except OSError:
            # sysfs attributes can fail to read (EINVAL, EIO) on some devices: treat as absent.
            return None

    def listdir(self, path: str) -> list[str]:
        try:
            return sorted(os.listdir(self.root / path.lstrip("/")))
        except OSError:
            return []


class CaptureSource:
    """A capture bundle folder: commands replayed from their files, sysfs from `sys/`.

    Every file goes through a CaptureReader (`facts/capture_reader.py`): nothing is read outside
    the bundle, files are bounded, undecodable bytes are replaced and listed in `warnings`.
    Its methods raise CaptureError for a file they refuse.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.files = CaptureReader(self.root)
        self.description = f"capture {self.root}"

    @property
    def warnings(self) -> tuple[str, ...]:
        """One line per file whose bytes were not all UTF-8 (replaced by U+FFFD)."""
        return self.files.warnings

    def read(self, path: str) -> str | None:
        return self.files.read(path)

    def listdir(self, path: str) -> list[str]:
        return self.files.listdir(path)

    def run(self, argv: Sequence[str]) -> CommandOutput:
        entry = command_for(tuple(argv))
        if entry is None:
            return CommandOutput(rc=RC_NOT_FOUND, stdout="", stderr=f"{' '.join(argv)}: not part of captures")
        text = self.read(entry.filename)
        if text is None:
            return CommandOutput(rc=RC_NOT_FOUND, stdout="", stderr=f"{entry.filename}: not in this capture")
        _frame, output = parse_capture_file(text, name=str(self.root / entry.filename))
        return output


def source_warnings(source: Source) -> tuple[str, ...]:
    """What reading `source` had to warn about so far (undecodable capture files); () for a live host."""
    return source.warnings if isinstance(source, CaptureSource) else ()


def is_capture_dir(root: str | os.PathLike[str]) -> bool:
    """True when `root` holds at least one capture command file."""
    base = Path(root)
    # A link counts: reading it then refuses it by name, rather than "not a capture".
    return any((base / c.filename).is_file() or (base / c.filename).is_symlink() for c in CAPTURE_COMMANDS)


def open_source(root: str | os.PathLike[str], runner: Runner) -> Source:
    """Capture replay when `root` is a capture bundle, else the live machine below `root`."""
    if str(root) not in ("", "/") and is_capture_dir(root):
        return CaptureSource(root)
    return LiveSource(runner, root or "/")
