"""`gpurack capture`: write this machine's hardware view into a bundle folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpurack import capture, render
from gpurack.commands import Subparsers
from gpurack.errors import ExitCode


def register(subparsers: Subparsers) -> None:
    """Add `gpurack capture` to the CLI."""
    parser = subparsers.add_parser("capture", help="write this machine's hardware view into a bundle")
    parser.add_argument("--output", "-o", type=Path, required=True, help="folder to write (must be empty)")
    parser.add_argument("--root", type=Path, default=Path("/"), help="read sysfs and /etc below ROOT")
    parser.add_argument("--force", action="store_true", help="write into a non-empty folder")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run `gpurack capture`."""
    with render.progress("capturing", capture.step_count()) as step:
        result = capture.capture(args.output, root=args.root, force=args.force, step=step)
    render.capture_summary(result)
    return ExitCode.OK
