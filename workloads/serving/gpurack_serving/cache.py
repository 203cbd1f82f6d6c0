"""The node-local model cache: a folder on the node (its NVMe scratch where it has one) that holds
each model a server started with, so a second start on the node downloads nothing.

Its size limit is enforced before a download: least recently used models go first, and a model a
running server holds is never removed. Layout under the cache's root:

    .lock                 held exclusively while one launcher looks, evicts and downloads
    models/<key>/         one model's files, complete (a download is renamed in when whole)
    models/<key>.json     its record: uri, bytes, fetched, last_used
    locks/<key>.lock      held shared by every server using the model, for the server's life
    partial/              downloads in progress; what an interrupted one left is removed
    report.json           the cache's state after the last launch (what `report` returns)

A server keeps its shared lock across exec (the descriptor is inheritable), so the lock lasts
exactly as long as the server process: a killed pod releases it with no clean-up to run.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

from gpurack_serving.errors import CacheFullError, InputError


class Source(Protocol):
    """Where a model comes from: its size is asked only on a miss, before anything is evicted."""

    uri: str

    def size(self) -> int: ...

    def fetch(self, into: Path) -> None: ...


@dataclass(frozen=True, slots=True)
class Model:
    """One cached model's record."""

    key: str
    uri: str
    bytes: int
    fetched: float
    last_used: float


@dataclass(frozen=True, slots=True)
class Launch:
    """What one launch did: the model's folder, hit or miss, the download's seconds and bytes, the
    models evicted for it, and the cache's use after it."""

    path: str
    hit: bool
    download_s: float
    bytes: int
    evicted: tuple[str, ...]
    used_bytes: int
    limit_bytes: int
    lock_fd: int  # the shared lock the server keeps; inheritable


def model_key(uri: str) -> str:
    """A folder name for `uri`: readable, and unique by a digest of the whole URI."""
    tail = re.sub(r"[^A-Za-z0-9._-]+", "-", uri.rstrip("/").rsplit("/", 1)[-1]).strip("-.")[:40]
    return f"{tail or 'model'}-{hashlib.sha256(uri.encode()).hexdigest()[:12]}"


class ModelCache:
    """The cache at `root`, limited to `limit_bytes` of model files."""

    def __init__(self, root: Path, limit_bytes: int, clock: Callable[[], float] = time.time) -> None:
        if limit_bytes < 1:
            raise InputError(f"the model cache limit must be at least 1 byte, got {limit_bytes}")
        self.root = root
        self.limit_bytes = limit_bytes
        self.clock = clock
        self.models = root / "models"
        self.locks = root / "locks"
        self.partial = root / "partial"

    def acquire(self, source: Source) -> Launch:
        """The model of `source` in the cache, held shared for this process and what it execs.

        Raises:
            InputError: the model is larger than the whole cache, or the cache cannot be written.
            CacheFullError: it does not fit beside the models running servers hold.
        """
        key = model_key(source.uri)
        try:
            for folder in (self.models, self.locks, self.partial):
                folder.mkdir(parents=True, exist_ok=True)
            with self._exclusive():
                self._tidy()
                record = self._record(key)
                hit = record is not None and (self.models / key).is_dir()
                evicted: tuple[str, ...] = ()
                seconds = 0.0
                if record is None or not hit:
                    size = source.size()
                    evicted = self._make_room(size, keep=key)
                    seconds, record = self._download(key, source)
                record = Model(record.key, record.uri, record.bytes, record.fetched, self.clock())
                self._write_record(record)
                fd = self._hold_shared(key)
                used = sum(m.bytes for m in self.list())
                self._write_report()
        except OSError as exc:
            raise InputError(f"model cache {self.root}: {exc.strerror or exc}") from None
        return Launch(
            path=str(self.models / key),
            hit=hit,
            download_s=seconds,
            bytes=record.bytes,
            evicted=evicted,
            used_bytes=used,
            limit_bytes=self.limit_bytes,
            lock_fd=fd,
        )

    def _tidy(self) -> None:
        """What a crash left, removed while no other launcher of this cache can run: downloads
        in progress, and model folders without a record (renamed in, never recorded, or half
        evicted), which the limit would not count. No server holds those: it starts only after
        the record is written."""
        shutil.rmtree(self.partial, ignore_errors=True)
        self.partial.mkdir(exist_ok=True)
        for folder in self.models.iterdir():
            if folder.is_dir() and self._record(folder.name) is None:
                shutil.rmtree(folder, ignore_errors=True)

    def list(self) -> list[Model]:
        """Every complete model, least recently used first."""
        found = [m for p in self.models.glob("*.json") if (m := self._record(p.stem)) is not None]
        return sorted(found, key=lambda m: (m.last_used, m.key))

    def report(self) -> dict[str, object]:
        """The limit, the bytes used and each model with whether a server holds it now."""
        models = self.list()
        return {
            "limit_bytes": self.limit_bytes,
            "used_bytes": sum(m.bytes for m in models),
            "models": [{**asdict(m), "in_use": self._in_use(m.key)} for m in models],
        }

    def _make_room(self, size: int, keep: str) -> tuple[str, ...]:
        """Evict least recently used models nobody holds until `size` more bytes fit."""
        if size > self.limit_bytes:
            raise InputError(
                f"the model needs {size} bytes, more than the cache's limit of {self.limit_bytes}"
            )
        models = [m for m in self.list() if m.key != keep]
        used = sum(m.bytes for m in models)
        evicted: list[str] = []
        held: list[str] = []
        for model in models:
            if used + size <= self.limit_bytes:
                break
            if self._evict(model.key):
                used -= model.bytes
                evicted.append(model.uri)
            else:
                held.append(model.uri)
        if used + size > self.limit_bytes:
            raise CacheFullError(
                f"the model needs {size} bytes; the cache's limit is {self.limit_bytes} and running servers "
                f"hold {used} of it ({', '.join(held)})"
            )
        return tuple(evicted)

    def _evict(self, key: str) -> bool:
        """Remove a model unless a server holds it (its lock cannot be taken exclusively)."""
        fd = os.open(self.locks / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            (self.models / f"{key}.json").unlink(missing_ok=True)  # no record first: never a half model
            shutil.rmtree(self.models / key, ignore_errors=True)
            return True
        finally:
            os.close(fd)

    def _in_use(self, key: str) -> bool:
        lock = self.locks / f"{key}.lock"
        if not lock.exists():
            return False
        fd = os.open(lock, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def _download(self, key: str, source: Source) -> tuple[float, Model]:
        staging = self.partial / key
        started = time.monotonic()
        source.fetch(staging)
        seconds = time.monotonic() - started
        size = sum(f.stat().st_size for f in staging.rglob("*") if f.is_file())
        os.replace(staging, self.models / key)
        now = self.clock()
        return seconds, Model(key, source.uri, size, now, now)

    def _hold_shared(self, key: str) -> int:
        fd = os.open(self.locks / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_SH)
        os.set_inheritable(fd, True)
        return fd

    def _record(self, key: str) -> Model | None:
        try:
            raw = json.loads((self.models / f"{key}.json").read_text())
            return Model(
                key, str(raw["uri"]), int(raw["bytes"]), float(raw["fetched"]), float(raw["last_used"])
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _write_record(self, model: Model) -> None:
        fields = asdict(model)
        del fields["key"]
        _write_atomic(self.models / f"{model.key}.json", json.dumps(fields, sort_keys=True))

    def _write_report(self) -> None:
        _write_atomic(self.root / "report.json", json.dumps(self.report(), sort_keys=True))

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text + "\n")
    os.replace(tmp, path)
