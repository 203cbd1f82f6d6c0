"""The one error the tool reports without a traceback."""

from __future__ import annotations


class LoadgenError(Exception):
    """A run that could not start or wait for its server: bad arguments, nothing at the URL.

    Exit 2: the caller learns the load was not measured, not that the server failed it."""

    code = 2
