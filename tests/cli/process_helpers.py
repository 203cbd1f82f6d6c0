"""Run a function in several real processes at once (forked, so gpurack is imported already).

The processes wait at a barrier and start together, so their database writes overlap instead
of running one after another. A forked child leaves through os._exit (multiprocessing's way),
so it never runs the test session's atexit handlers, such as the PostgreSQL server's stop.
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable
from multiprocessing.queues import SimpleQueue
from multiprocessing.synchronize import Barrier
from typing import Any

_FORK = multiprocessing.get_context("fork")
TIMEOUT_S = 120


def _child(
    target: Callable[..., object],
    barrier: Barrier,
    errors: SimpleQueue[str],
    index: int,
    args: tuple[Any, ...],
) -> None:
    try:
        barrier.wait(timeout=TIMEOUT_S)
        target(index, *args)
    except BaseException:
        errors.put(f"process {index}: {traceback.format_exc(limit=-3)}")
        raise SystemExit(1) from None


def together(target: Callable[..., object], count: int, *args: Any) -> list[str]:
    """Call `target(index, *args)` in `count` processes started together; what went wrong in them.

    A process fails when `target` raises (the error comes back) or does not finish in time.
    """
    barrier = _FORK.Barrier(count)
    errors: SimpleQueue[str] = _FORK.SimpleQueue()
    procs = [_FORK.Process(target=_child, args=(target, barrier, errors, i, args)) for i in range(count)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(TIMEOUT_S)
    found = []
    while not errors.empty():
        found.append(errors.get())
    for index, proc in enumerate(procs):
        if proc.exitcode is None:
            proc.kill()
            found.append(f"process {index}: still running after {TIMEOUT_S} s")
        elif proc.exitcode and not found:
            found.append(f"process {index}: exit {proc.exitcode}")
    return found
