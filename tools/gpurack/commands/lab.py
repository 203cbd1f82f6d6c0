"""`gpurack lab`: the lab rack comes with a checkout; here is what says so when it is missing.

The lab registers its own `lab` verb through the `gpurack.commands` entry point. Without it,
a lab folder inside this package (an older checkout) still provides the verb; otherwise
`gpurack lab ...` explains in one line and exits 64.
"""

from __future__ import annotations

import argparse
import importlib

from gpurack.commands import Subparsers
from gpurack.errors import UsageError

MISSING = "the lab comes with a gpurack checkout: run `make setup` there, then `gpurack lab` works"
_IN_PACKAGE = "gpurack.lab.cli"


def register(subparsers: Subparsers) -> None:
    """Add the in-package lab's verbs when there is one, else the stand-in `gpurack lab`."""
    try:
        module = importlib.import_module(_IN_PACKAGE)
    except ModuleNotFoundError as exc:
        if exc.name is None or not _IN_PACKAGE.startswith(exc.name):
            raise
    else:
        module.register(subparsers)
        return
    parser = subparsers.add_parser("lab", help="the lab rack (comes with a checkout: make setup)")
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Say where the lab comes from; UsageError exits 64."""
    raise UsageError(MISSING)
