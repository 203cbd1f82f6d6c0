"""Output files written whole or not at all, and never over an earlier one unless asked.

The text goes to a temporary file beside the target, is flushed to disk, then takes the
target's name in one step: a crash or a full disk leaves the earlier file or none, never
half of one. Without `replace`, the last step is a hard link, which fails when the name is
taken, so two writers racing for one name cannot overwrite each other either. A target that
is a symbolic link is replaced as a link, never written through.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from gpurack.errors import UsageError

# Filesystems without hard links answer these; there the check before the rename has to do.
_NO_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK})


def refuse_existing(paths: list[Path]) -> None:
    """Raise for the first of `paths` that exists (a dangling link counts).

    Raises:
        UsageError: one line naming the file and `--force`.
    """
    for path in paths:
        if os.path.lexists(path):
            raise UsageError(existing_message(path))


def existing_message(path: Path) -> str:
    """The one line for a target that is already there."""
    return f"{path} already exists (--force replaces it)"


def write_text(path: Path, text: str, *, replace: bool = False) -> None:
    """Write `text` to `path` atomically, with the mode a plain new file would get.

    Raises:
        UsageError: `path` exists and `replace` is off, or it cannot be written.
    """
    try:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc
    partial = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        partial.chmod(_new_file_mode())
        _publish(partial, path, replace=replace)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        partial.unlink(missing_ok=True)


def write_texts(texts: dict[Path, str], *, force: bool = False) -> list[Path]:
    """Write each text to its path (making their folders); return the paths. Without `force`,
    nothing is written when one of them is already there.

    Raises:
        UsageError: a path exists and `force` is off, or a folder or a file cannot be written.
    """
    paths = list(texts)
    if not force:
        refuse_existing(paths)
    for folder in dict.fromkeys(path.parent for path in paths):
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot write into {folder}: {exc.strerror or exc}") from exc
    for path, text in texts.items():
        write_text(path, text, replace=force)
    return paths


def _publish(partial: Path, path: Path, *, replace: bool) -> None:
    if replace:
        os.replace(partial, path)
        return
    try:
        os.link(partial, path, follow_symlinks=False)
    except FileExistsError:
        raise UsageError(existing_message(path)) from None
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        refuse_existing([path])
        os.replace(partial, path)


def _new_file_mode() -> int:
    """0666 less the umask, as open() would create it (mkstemp makes 0600)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask
