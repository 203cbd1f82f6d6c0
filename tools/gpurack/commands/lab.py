"""`gpurack lab` when the lab is not installed: the lab rack comes with a checkout.

The lab (lab/, the `gpurack-lab` distribution) registers its own `lab` verb through the
`gpurack.commands` entry point, which replaces this one; without it, `gpurack lab ...`
explains in one line and exits 64.
"""

from __future__ import annotations

import argparse

from gpurack.commands import Subparsers
from gpurack.errors import UsageError

MISSING = "the lab comes with a gpurack checkout: run `make setup` there, then `gpurack lab` works"


def register(subparsers: Subparsers) -> None:
    """Add the stand-in `gpurack lab`."""
    parser = subparsers.add_parser("lab", help="the lab rack (comes with a checkout: make setup)")
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Say where the lab comes from; UsageError exits 64."""
    raise UsageError(MISSING)
