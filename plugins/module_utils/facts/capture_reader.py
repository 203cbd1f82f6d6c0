# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Read a capture bundle's files as data, never as a path into the host (stdlib only).

A bundle may come from a support ticket or from somebody hostile, so every read:

- stays inside the bundle: a link (file or folder, at any depth) that resolves outside it
  is refused, naming the file inside the bundle and never what it points to; links that
  stay inside are followed (a hand-made bundle may share files);
- reads regular files only (a FIFO, device or folder in a file's place is refused, so a
  read never blocks or streams forever);
- is bounded: a file over MAX_FILE_BYTES is refused from its size, before it is read, and
  no read takes more than MAX_FILE_BYTES + 1 bytes;
- decodes UTF-8 with replacement: undecodable bytes become U+FFFD and the file is named in
  `warnings`, never a UnicodeDecodeError.

Refusals raise CaptureError; a missing file is None (a bundle may lack a tool's output).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import CaptureError

# The largest real capture file seen is lspci -vvv of an 8-GPU HGX (about 0.9 MB); 16 MiB
# leaves room for the largest machines while keeping a hostile file from filling memory.
MAX_FILE_BYTES = 16 * 1024 * 1024

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_ABSENT = (errno.ENOENT, errno.ENOTDIR)


class CaptureReader:
    """Bounded, contained reads of the files of one bundle folder; see the module docstring."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self._real_root = Path(os.path.realpath(self.root))
        self._warnings: dict[str, str] = {}

    @property
    def warnings(self) -> tuple[str, ...]:
        """One line per file whose bytes were not all UTF-8, in the order they were read."""
        return tuple(self._warnings.values())

    def read(self, path: str) -> str | None:
        """Text of a bundle file (`sys/...`, `uname.txt`), None when absent.

        Raises:
            CaptureError: the file leaves the bundle, is not a regular file, is over
                MAX_FILE_BYTES or cannot be read.
        """
        data = self.read_bytes(path)
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._warnings.setdefault(path, _undecodable(self._name(path), data, exc.start))
            return data.decode("utf-8", errors="replace")

    def read_bytes(self, path: str) -> bytes | None:
        """Bytes of a bundle file, None when absent; the refusals of `read`."""
        real = self._locate(path)
        if real is None:
            return None
        try:
            fd = os.open(real, _OPEN_FLAGS)
        except OSError as exc:
            if exc.errno in _ABSENT:
                return None
            raise self._open_failed(path, exc) from None
        try:
            return self._read_fd(path, fd)
        finally:
            os.close(fd)

    def listdir(self, path: str) -> list[str]:
        """Sorted entries of a bundle folder, [] when absent.

        Raises:
            CaptureError: the folder or one of its entries is a link that leaves the bundle.
        """
        real = self._locate(path)
        if real is None:
            return []
        try:
            entries = sorted(os.listdir(real))
        except OSError as exc:
            if exc.errno in _ABSENT:
                return []
            raise CaptureError(f"{self._name(path)}: cannot list ({exc.strerror})") from None
        base = path.strip("/")
        for entry in entries:
            self._locate(f"{base}/{entry}" if base else entry)
        return entries

    def _name(self, path: str) -> str:
        """How errors name a file: the bundle folder and the path inside it."""
        return f"{self.root}/{path.lstrip('/')}"

    def _locate(self, path: str) -> str | None:
        """The real path of `path` when it stays inside the bundle; None when absent."""
        candidate = os.path.join(self.root, path.lstrip("/"))
        if not os.path.lexists(candidate):
            # A link higher up may lead outside even when the file itself is absent there.
            nearest = _nearest_existing(candidate)
            inside_root = len(nearest) >= len(str(self.root))
            if inside_root and not _inside(os.path.realpath(nearest), self._real_root):
                raise _leaves(self._name(path))
            return None
        real = os.path.realpath(candidate)
        if not _inside(real, self._real_root):
            raise _leaves(self._name(path))
        return real

    def _open_failed(self, path: str, exc: OSError) -> CaptureError:
        if exc.errno == errno.ELOOP:
            return CaptureError(f"{self._name(path)}: is a link loop (refused)")
        return CaptureError(f"{self._name(path)}: cannot read ({exc.strerror})")

    def _read_fd(self, path: str, fd: int) -> bytes:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise CaptureError(f"{self._name(path)}: is a folder where a file was expected (refused)")
        if not stat.S_ISREG(info.st_mode):
            raise CaptureError(
                f"{self._name(path)}: is not a regular file (refused: a capture holds files only)"
            )
        if info.st_size > MAX_FILE_BYTES:
            raise _too_large(self._name(path), info.st_size)
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, min(1 << 20, MAX_FILE_BYTES + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_FILE_BYTES:
                raise _too_large(self._name(path), size)
        return b"".join(chunks)


def _nearest_existing(path: str) -> str:
    """`path` or its closest ancestor that exists (as a link or a file)."""
    while not os.path.lexists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


def _inside(real: str, root: Path) -> bool:
    return Path(real) == root or Path(real).is_relative_to(root)


def _leaves(name: str) -> CaptureError:
    return CaptureError(
        f"{name}: is a link that leaves the capture bundle"
        " (refused: a capture is data, never a path into the host)"
    )


def _too_large(name: str, size: int) -> CaptureError:
    limit_mib = MAX_FILE_BYTES // (1024 * 1024)
    return CaptureError(f"{name}: {size} bytes is over the {limit_mib} MiB a capture file may hold (refused)")


def _undecodable(name: str, data: bytes, first: int) -> str:
    count = data.decode("utf-8", errors="replace").count("\ufffd") - data.decode(
        "utf-8", errors="ignore"
    ).count("\ufffd")
    return f"{name}: {count} undecodable byte sequence(s) replaced by U+FFFD (first at byte {first})"
