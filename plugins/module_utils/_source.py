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

from ansible_collections.gpurack.bootstrap.plugins.module_utils._capture import (
    CAPTURE_COMMANDS,
    RC_NOT_FOUND,
    CaptureFormatError,
    CommandOutput,
    Runner,
    command_for,
    parse_capture_file,
)

__all__ = ["CaptureError", "CaptureSource", "LiveSource", "Runner", "Source", "is_capture_dir", "open_source"]


class Source(Protocol):
    """Read-only view of one node."""

    description: str

    def run(self, argv: Sequence[str]) -> CommandOutput:
        """Run (or replay) a command; rc 127 when the tool is absent."""

    def read(self, path: str) -> str | None:
        """Text of a file relative to the node's root (`sys/...`), None when absent."""

    def listdir(self, path: str) -> list[str]:
        """Sorted entries of a directory relative to the root, [] when absent."""


class _RootedFiles:
    """File access below a root directory, shared by both sources."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def _path(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def read(self, path: str) -> str | None:
        try:
            return self._path(path).read_text(encoding="utf-8", errors="replace")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
            return None
        except OSError:
            # sysfs attributes can fail to read (EINVAL, EIO) on some devices: treat as absent.
            return None

    def listdir(self, path: str) -> list[str]:
        try:
            return sorted(os.listdir(self._path(path)))
        except OSError:
            return []


class LiveSource(_RootedFiles):
    """A running machine: commands through `runner`, files below `root` (default `/`)."""

    def __init__(self, runner: Runner, root: str | os.PathLike[str] = "/") -> None:
        super().__init__(root)
        self._runner = runner
        self.description = f"live host (root {self.root})"

    def run(self, argv: Sequence[str]) -> CommandOutput:
        return self._runner(argv)


class CaptureSource(_RootedFiles):
    """A capture bundle folder: commands replayed from their files, sysfs from `sys/`."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        super().__init__(root)
        self.description = f"capture {self.root}"

    def run(self, argv: Sequence[str]) -> CommandOutput:
        entry = command_for(tuple(argv))
        if entry is None:
            return CommandOutput(rc=RC_NOT_FOUND, stdout="", stderr=f"{' '.join(argv)}: not part of captures")
        text = self.read(entry.filename)
        if text is None:
            return CommandOutput(rc=RC_NOT_FOUND, stdout="", stderr=f"{entry.filename}: not in this capture")
        try:
            _, output = parse_capture_file(text, name=str(self.root / entry.filename))
        except CaptureFormatError as exc:
            raise CaptureError(str(exc)) from exc
        return output


class CaptureError(ValueError):
    """A capture bundle is unreadable or malformed; the message names the file."""


def is_capture_dir(root: str | os.PathLike[str]) -> bool:
    """True when `root` holds at least one capture command file."""
    base = Path(root)
    return any((base / c.filename).is_file() for c in CAPTURE_COMMANDS)


def open_source(root: str | os.PathLike[str], runner: Runner) -> Source:
    """Capture replay when `root` is a capture bundle, else the live machine below `root`."""
    if str(root) not in ("", "/") and is_capture_dir(root):
        return CaptureSource(root)
    return LiveSource(runner, root or "/")
