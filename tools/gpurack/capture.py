"""Write what this machine shows into a capture bundle folder (`gpurack capture`)."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import CaptureError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import (
    CapturedCommand,
    CaptureReader,
    FolderSink,
    Step,
    command_line,
    write_bundle,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts import step_count as bundle_step_count

from gpurack import __version__, local
from gpurack.errors import UsageError

MANIFEST = "capture.json"
MANIFEST_SCHEMA = 1


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
        UsageError: `output` exists and is not empty (without force), or is not a folder; this
            machine's host name is no Kubernetes node name (checked before anything is written).
    """
    host = local.hostname()
    _prepare_output(output, force)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    bundle = write_bundle(root, local.run_command, FolderSink(output), step=step)
    result = CaptureResult(
        output=output,
        host=host,
        captured_at=started,
        commands=tuple(_record(done) for done in bundle.commands),
        files=bundle.files,
        sysfs_entries=bundle.sysfs.entries,
        sysfs_files=bundle.sysfs.files,
    )
    _write_manifest(result, root)
    return result


def step_count() -> int:
    """Number of progress steps `capture` reports."""
    return bundle_step_count()


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


def _record(done: CapturedCommand) -> CommandRecord:
    """The manifest's line for one captured command."""
    return CommandRecord(
        file=done.command.filename,
        command=command_line(done.command),
        rc=done.output.rc,
        seconds=done.seconds,
    )


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


def read_manifest(bundle: CaptureReader) -> dict[str, object] | None:
    """The capture.json of a bundle, None when absent (older or hand-made bundles).

    Raises:
        CaptureError: the file is refused by the reader (a link out of the bundle, oversize),
            or it is not a JSON object: a manifest that is there but unreadable is damage, and
            gpurack does not fall back to a name it would have to guess.
    """
    text = bundle.read(MANIFEST)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CaptureError(f"{bundle.root / MANIFEST}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise CaptureError(f"{bundle.root / MANIFEST}: must be a JSON object, got {type(data).__name__}")
    return data
