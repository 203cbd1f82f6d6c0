"""Exit codes and the one error type the CLI turns into a message and a code."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes; fixed by the issues, so scripts and CI can rely on them."""

    OK = 0
    FAILED = 1  # a check or a play failed
    NOT_ASSESSED = 2  # could not assess: unreachable host, unreadable input, timeout
    USAGE = 64  # usage or configuration error (sysexits EX_USAGE)
    INTERNAL = 70  # a bug in gpurack (sysexits EX_SOFTWARE)
    INTERRUPTED = 130


class GpurackError(Exception):
    """An expected failure: one line for the operator, optional detail lines, an exit code."""

    code: ExitCode = ExitCode.INTERNAL

    def __init__(self, message: str, details: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class UsageError(GpurackError):
    """The command line or a configuration file given to it is wrong."""

    code = ExitCode.USAGE


class NotAssessedError(GpurackError):
    """The node could not be assessed: unreadable or truncated input, unreachable host."""

    code = ExitCode.NOT_ASSESSED


class InterruptedRunError(GpurackError):
    """The operator interrupted the run."""

    code = ExitCode.INTERRUPTED
