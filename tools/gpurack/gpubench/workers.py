"""Worker processes of one measurement: started together, watched together, always reaped.

Output goes to temporary files, not pipes, so a chatty worker (NCCL warnings) never blocks
on a full pipe while the parent waits for another one.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import IO


class WorkerGroup:
    """Processes started with one environment; a context manager that kills leftovers on exit."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = dict(env)
        self._stack = contextlib.ExitStack()
        self._procs: list[tuple[subprocess.Popen[bytes], IO[str], IO[str]]] = []

    def __enter__(self) -> WorkerGroup:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.kill()
        self._stack.close()

    def start(self, argv: Sequence[str]) -> None:
        """Start one worker."""
        # The group's ExitStack closes both files when the group exits.
        out = self._stack.enter_context(tempfile.TemporaryFile("w+", errors="replace"))  # noqa: SIM115
        err = self._stack.enter_context(tempfile.TemporaryFile("w+", errors="replace"))  # noqa: SIM115
        proc = subprocess.Popen(list(argv), env=self._env, stdout=out, stderr=err)
        self._procs.append((proc, out, err))

    def __len__(self) -> int:
        return len(self._procs)

    def returncodes(self) -> list[int | None]:
        """Exit status of each worker, None while it runs."""
        return [proc.poll() for proc, _, _ in self._procs]

    def wait(self, timeout_s: float, tick: Callable[[], None] | None = None, tick_s: float = 0.5) -> bool:
        """Wait until all end, one fails, or `timeout_s` passes; True when all ended by themselves.

        A failed worker ends the wait at once: its peers would block in a collective forever.
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            codes = self.returncodes()
            if all(c is not None for c in codes) or any(c not in (None, 0) for c in codes):
                return all(c is not None for c in codes)
            if tick is not None:
                tick()
            time.sleep(tick_s)
        return False

    def kill(self) -> None:
        """Kill every worker still running (each by its own process id) and reap it."""
        for proc, _, _ in self._procs:
            if proc.poll() is None:
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)

    def stdout(self, position: int) -> str:
        """Everything worker `position` printed on stdout so far."""
        return _read(self._procs[position][1])

    def stderr_tail(self, position: int, lines: int = 3) -> str:
        """The last lines worker `position` printed on stderr, joined by ' | '."""
        return " | ".join(_read(self._procs[position][2]).strip().splitlines()[-lines:])


def _read(handle: IO[str]) -> str:
    handle.flush()
    handle.seek(0)
    return handle.read()
