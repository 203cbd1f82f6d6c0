"""The launcher's failures that are not bugs: bad settings or inputs (exit 2), other (exit 1)."""

from __future__ import annotations


class ServingError(Exception):
    """A failure reported as one line on stderr, with an exit code."""

    code = 1


class InputError(ServingError):
    """Bad settings or unusable inputs: a missing model, a model larger than the cache."""

    code = 2


class CacheFullError(ServingError):
    """The model does not fit beside the models that running servers hold (none of them can go)."""

    code = 3
