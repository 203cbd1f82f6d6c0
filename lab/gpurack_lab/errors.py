"""The lab's own error: it could not be brought up or inspected (exit 1, one line)."""

from __future__ import annotations

from gpurack.errors import ExitCode, GpurackError


class LabError(GpurackError):
    """The lab could not be brought up or inspected."""

    code = ExitCode.FAILED
