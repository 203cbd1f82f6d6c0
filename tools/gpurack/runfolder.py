"""ansible-runner's private data folders under runs/: private while a run writes them, without secrets after.

ansible-runner keeps what it hands ansible-playbook in the folder: `env/extravars` (every `-e`
value, secrets too), `env/envvars`, and `env/passwords`, `env/ssh_key`, `env/settings` or
`env/cmdline` where given, and `artifacts/<ident>/command` holds the driver's whole
environment (a `GPURACK_DB` URL with its password, cloud keys). What is read afterwards is only
`artifacts/<ident>/`'s `job_events/`, `stdout`, `stderr`, `status` and `rc`
(harvest, the recap, the lab's log). So `scrub()` keeps those (owner-only: they hold host
data), rewrites `command` with the environment's names only and removes `env/` last: a folder
with `env/` is one not yet scrubbed.

A run holds an exclusive lock on its folder while it runs. One killed before it could scrub
(SIGKILL, a power cut) leaves its `env/` behind; the next run scrubs every such folder whose
lock it can take, so a secret outlives its run only until the next one starts.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from gpurack.errors import UsageError

SECRETS_DIR = "env"
# Written by ansible-runner into artifacts/<ident>/ for a containerised run or an SSH key.
_SECRET_ARTIFACTS = ("env.list", "ssh_key_data")
_DIR_MODE = 0o700
_FILE_MODE = 0o600


@contextlib.contextmanager
def new_run_dir(runs_dir: Path) -> Iterator[Path]:
    """A fresh owner-only folder under runs_dir, locked while the block runs and scrubbed after it.

    Folders of earlier runs that were killed before they scrubbed are scrubbed first.

    Raises:
        UsageError: no folder can be created under runs_dir.
    """
    try:
        runs_dir.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        sweep(runs_dir)
        folder = _create(runs_dir)
    except OSError as exc:
        raise UsageError(f"cannot create a run folder under {runs_dir}: {exc.strerror or exc}") from exc
    with _locked(folder, blocking=True):
        try:
            yield folder
        finally:
            scrub(folder)


def _create(runs_dir: Path) -> Path:
    """A new folder named after the current UTC time (suffixed when two runs share a second)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    for n in range(1000):
        candidate = runs_dir / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            candidate.mkdir(mode=_DIR_MODE)
        except FileExistsError:
            continue
        candidate.chmod(_DIR_MODE)  # whatever the umask
        return candidate
    raise UsageError(f"cannot create a run folder under {runs_dir}: 1000 runs in one second")


@contextlib.contextmanager
def _locked(folder: Path, *, blocking: bool) -> Iterator[bool]:
    """Hold an exclusive lock on the folder; yields False when `blocking` is off and another holds it."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the lock


def sweep(runs_dir: Path) -> list[Path]:
    """Scrub the folders under runs_dir that still hold `env/` and whose run is over; return them."""
    done = []
    for folder in sorted(runs_dir.iterdir()):
        if folder.is_symlink() or not (folder / SECRETS_DIR).is_dir():
            continue
        with contextlib.suppress(OSError), _locked(folder, blocking=False) as mine:
            if mine:  # no live run holds it
                scrub(folder)
                done.append(folder)
    return done


def scrub(folder: Path) -> None:
    """Leave only what harvest and the recap read, owner-only, with no value of the run's environment.

    Best effort item by item, so one file that resists does not keep `env/` behind; it never
    raises, as it runs in a `finally` that must not hide the run's own outcome.
    """
    for ident in folder.glob("artifacts/*"):
        if ident.is_symlink() or not ident.is_dir():
            continue
        for name in _SECRET_ARTIFACTS:
            with contextlib.suppress(OSError):
                (ident / name).unlink(missing_ok=True)
        try:
            _redact_command(ident / "command")
        except OSError:
            with contextlib.suppress(OSError):
                (ident / "command").unlink(missing_ok=True)  # rather no record than the values
    _tighten(folder)
    shutil.rmtree(folder / SECRETS_DIR, ignore_errors=True)


def _redact_command(path: Path) -> None:
    """Keep the command line and folder ansible-runner ran; of the environment, only the names."""
    if path.is_symlink() or not path.is_file():
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict):
        path.unlink(missing_ok=True)  # nothing here is worth a secret
        return
    env = data.pop("env", None)
    data["env_names"] = sorted(env) if isinstance(env, dict) else []
    partial = path.with_name(f".{path.name}.tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, _FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, ensure_ascii=False)
    os.replace(partial, path)


def _tighten(folder: Path) -> None:
    """Folders 0700 and files 0600 (ansible-runner leaves fact_cache/ and stderr readable to all)."""
    for root, dirs, files in os.walk(folder):
        for name in dirs:
            _chmod(Path(root, name), _DIR_MODE)
        for name in files:
            _chmod(Path(root, name), _FILE_MODE)
    _chmod(folder, _DIR_MODE)


def _chmod(path: Path, mode: int) -> None:
    if not path.is_symlink():  # a link's mode means nothing; its target may lie outside the run
        with contextlib.suppress(OSError):
            path.chmod(mode)
