"""Command line: build the parser from `gpurack.commands` and its entry points, dispatch, map errors."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from gpurack import __version__, commands, render
from gpurack.errors import ExitCode, GpurackError, UsageError

Handler = Callable[[argparse.Namespace], int]

# What `gpurack --help` opens with: for operators, not for developers (that is the docstring).
DESCRIPTION = """\
gpurack turns racks of bare-metal GPU servers into validated Kubernetes nodes: it reads each
server's hardware, checks it against its pool's expectations, runs the playbooks that prepare
and join it, and keeps an inventory of what every run saw.

common commands:
  gpurack facts --local                     this machine's GPUs, NICs, disks and labels
  gpurack validate --local --expect FILE    check this machine against a pool's expectations
  gpurack capture --output DIR              record this machine into a capture bundle
  gpurack run site -i INVENTORY             prepare, join and validate the inventory's servers
  gpurack inventory list                    every node seen, with its latest verdict
  gpurack queue -i INVENTORY                each team's Kueue queues, and why jobs wait
  gpurack accept -i INVENTORY               the acceptance test: seven rows and the cost per unit
  gpurack report latest                     the latest run as Markdown, HTML and JSON
  gpurack cost -i INVENTORY                 a window's cost per accepted unit, with charts
"""

EPILOG = """\
exit codes:
  0    ok
  1    a check or a play failed
  2    could not assess (unreachable host, unreadable input, timeout)
  64   usage or configuration error
  130  interrupted

'gpurack COMMAND --help' describes a command; --debug shows tracebacks.
"""


class ArgumentParser(argparse.ArgumentParser):
    """argparse that raises UsageError (exit 64, one line) instead of printing usage and exiting 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def build_parser() -> ArgumentParser:
    """The full `gpurack` parser with every registered subcommand."""
    common = ArgumentParser(add_help=False)
    # SUPPRESS keeps a subcommand's default from overwriting `gpurack --debug <command>`.
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    parser = ArgumentParser(
        prog="gpurack",
        description=DESCRIPTION,
        epilog=EPILOG,
        parents=[common],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"gpurack {__version__}")
    parser.set_defaults(debug=False)
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=ArgumentParser)
    commands.register_all(subparsers)
    for sub in subparsers.choices.values():
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one gpurack command; return its exit code.

    Called without argv (the console script), interrupts exit 130 and bugs print one line and exit 70;
    with argv (tests), anything but a GpurackError propagates.
    """
    if argv is None:
        return _as_program(sys.argv[1:])
    return dispatch(list(argv))


def dispatch(argv: list[str]) -> int:
    """Parse argv and run its handler, reporting GpurackError as one line and its exit code."""
    debug = "--debug" in argv
    try:
        args = build_parser().parse_args(argv)
        handler: Handler | None = getattr(args, "handler", None)
        if handler is None:
            raise UsageError("a command is required (see 'gpurack --help')")
        return handler(args)
    except GpurackError as exc:
        return render.error(exc, debug=debug)


def _as_program(argv: list[str]) -> int:
    """dispatch() with interrupts and unexpected exceptions mapped for an operator's terminal."""
    try:
        return dispatch(argv)
    except KeyboardInterrupt:
        return render.interrupted()
    except Exception as exc:  # the last line of defence before a user's terminal
        return render.internal_error(exc, debug="--debug" in argv)


__all__ = ["ExitCode", "build_parser", "dispatch", "main"]
