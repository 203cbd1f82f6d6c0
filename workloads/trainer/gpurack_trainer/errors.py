"""The trainer's two failure kinds that are not bugs: bad arguments or inputs (exit 2), other (exit 1)."""

from __future__ import annotations


class TrainerError(Exception):
    """A failure reported as one line on stderr, with an exit code."""

    code = 1


class InputError(TrainerError):
    """Bad arguments or unusable inputs: a missing object, a malformed file, an unknown URI."""

    code = 2
