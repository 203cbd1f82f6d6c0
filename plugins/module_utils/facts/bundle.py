# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Write one capture bundle (docs/capture-format.md) through a Sink: the one implementation.

`gpurack capture` writes it into a folder (FolderSink), the capture role's capture_bundle
module into a tar.gz on the node (TarSink) that the role fetches and unpacks. The content
is the list of `facts/capture.py`: its commands through a Runner, its plain files from their
origins below `root`, and the sysfs mirror of `facts/sysfs.py`. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.capture import (
    CAPTURE_COMMANDS,
    CAPTURE_FILES,
    CapturedCommand,
    Runner,
    command_line,
    read_plain_file,
    run_capture_command,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.sysfs import MirrorStats, Sink, mirror

Step = Callable[[str], None]


@dataclass(frozen=True)
class BundleStats:
    """What went into a bundle: each command's result, the plain files found and the sysfs mirror."""

    commands: tuple[CapturedCommand, ...]
    files: tuple[str, ...]
    sysfs: MirrorStats


def step_count() -> int:
    """Number of progress steps `write_bundle` reports (one per command, plain files, sysfs)."""
    return len(CAPTURE_COMMANDS) + 2


def write_bundle(
    root: Path, runner: Runner, sink: Sink, sysfs: bool = True, step: Step | None = None
) -> BundleStats:
    """Run every capture command, copy the plain files and mirror sysfs from `root` into `sink`."""
    advance = step or (lambda _label: None)
    commands = []
    for cmd in CAPTURE_COMMANDS:
        advance(command_line(cmd))
        done = run_capture_command(cmd, runner)
        sink(PurePosixPath(cmd.filename), done.text.encode("utf-8", errors="surrogateescape"))
        commands.append(done)
    advance("plain files")
    files = []
    for name in CAPTURE_FILES:
        data = read_plain_file(root, name)
        if data is not None:
            sink(PurePosixPath(name), data)
            files.append(name)
    advance("sysfs")
    mirrored = mirror(root, sink) if sysfs else MirrorStats(entries=0, files=0)
    return BundleStats(commands=tuple(commands), files=tuple(files), sysfs=mirrored)
