"""`python -m gpurack`: the console script, with Ctrl-C mapped to exit 130."""

from __future__ import annotations

import sys

from gpurack.cli import main
from gpurack.errors import ExitCode


def run() -> int:
    """Run the CLI as a program."""
    try:
        return main()
    except KeyboardInterrupt:  # raised outside main's own guard, e.g. while importing
        return int(ExitCode.INTERRUPTED)


if __name__ == "__main__":
    sys.exit(run())
