"""Write what this machine shows into a capture bundle folder (`gpurack capture`)."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from ansible_collections.gpurack.bootstrap.plugins.module_utils._capture import (
    CAPTURE_COMMANDS,
    CAPTURE_FILES,
    CaptureCommand,
    format_capture_file,
)

from gpurack import __version__, local
from gpurack.errors import UsageError
from gpurack.sysfs import mirror_sysfs

MANIFEST = "capture.json"
MANIFEST_SCHEMA = 1

# Where each plain file of CAPTURE_FILES comes from, first existing wins (os-release(5) order).
_FILE_ORIGINS: dict[str, tuple[str, ...]] = {"os-release": ("etc/os-release", "usr/lib/os-release")}

Step = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class CommandRecord:
    """One captured command: its file, command line, exit status and duration."""

    file: str
    command: str
    rc: int
    seconds: float


@dataclass(frozen=True, slots=True)
class CaptureResult:
    """A finished capture bundle."""

    output: Path
    host: str
    captured_at: str
    commands: tuple[CommandRecord, ...]
    files: tuple[str, ...]
    sysfs_entries: int
    sysfs_files: int


def capture(
    output: Path, root: Path = Path("/"), force: bool = False, step: Step | None = None
) -> CaptureResult:
    """Run every capture command here, copy CAPTURE_FILES and mirror sysfs from `root` into `output`.

    Raises:
        UsageError: `output` exists and is not empty (without force), or is not a folder.
    """
    _prepare_output(output, force)
    advance = step or (lambda _label: None)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    records = tuple(_capture_command(output, cmd, advance) for cmd in CAPTURE_COMMANDS)
    advance("plain files")
    files = tuple(name for name in CAPTURE_FILES if _copy_file(root, name, output))
    advance("sysfs")
    mirrored = mirror_sysfs(root, output)
    result = CaptureResult(
        output=output,
        host=local.hostname(),
        captured_at=started,
        commands=records,
        files=files,
        sysfs_entries=mirrored.entries,
        sysfs_files=mirrored.files,
    )
    _write_manifest(result, root)
    return result


def step_count() -> int:
    """Number of progress steps `capture` reports."""
    return len(CAPTURE_COMMANDS) + 2


def _prepare_output(output: Path, force: bool) -> None:
    """Create the output folder, refusing to mix a new capture into an old one unless forced."""
    if output.exists() and not output.is_dir():
        raise UsageError(f"--output {output} exists and is not a folder")
    if output.is_dir() and any(output.iterdir()) and not force:
        raise UsageError(f"--output {output} is not empty (use --force to write into it)")
    if force and (output / MANIFEST).is_file():
        # Only a folder we wrote ourselves loses its old sysfs mirror, so no stale devices remain.
        shutil.rmtree(output / "sys", ignore_errors=True)
    output.mkdir(parents=True, exist_ok=True)


def _capture_command(output: Path, cmd: CaptureCommand, advance: Step) -> CommandRecord:
    """Run one command and write its capture file."""
    command_line = " ".join(cmd.argv)  # unquoted, like the real captures' `# $` headers
    advance(command_line)
    start = time.monotonic()
    result = local.run_command(cmd.argv)
    seconds = round(time.monotonic() - start, 3)
    (output / cmd.filename).write_text(format_capture_file(command_line, result), encoding="utf-8")
    return CommandRecord(file=cmd.filename, command=command_line, rc=result.rc, seconds=seconds)


def _copy_file(root: Path, name: str, output: Path) -> bool:
    """Copy one plain file verbatim from its first existing origin; False when none exists."""
    for origin in _FILE_ORIGINS.get(name, (f"etc/{name}",)):
        try:
            data = (root / origin).read_bytes()
        except OSError:
            continue
        (output / name).write_bytes(data)
        return True
    return False


def _write_manifest(result: CaptureResult, root: Path) -> None:
    """Write capture.json: who, when, with which gpurack, and what each command returned."""
    manifest = {
        "schema_version": MANIFEST_SCHEMA,
        "host": result.host,
        "captured_at": result.captured_at,
        "gpurack_version": __version__,
        "root": str(root),
        "commands": [asdict(record) for record in result.commands],
        "files": list(result.files),
        "sysfs": {"entries": result.sysfs_entries, "files": result.sysfs_files},
    }
    text = json.dumps(manifest, indent=2) + "\n"
    (result.output / MANIFEST).write_text(text, encoding="utf-8")


def read_manifest(folder: Path) -> dict[str, object] | None:
    """The capture.json of a bundle, None when absent or unreadable (older or hand-made bundles)."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
