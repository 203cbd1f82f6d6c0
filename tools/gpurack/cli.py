"""Command line: build the parser from the command modules, dispatch, turn errors into exit codes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from types import ModuleType
from typing import NoReturn

from gpurack import __version__, capture, facts, inventory_cli, render, report, runner, validate
from gpurack.errors import ExitCode, GpurackError, UsageError

# Each module adds its subcommand with register(subparsers); a new command is one entry here.
COMMANDS: tuple[ModuleType, ...] = (capture, facts, validate, runner, inventory_cli, report)
# Other distributions add commands as entry points of this group, each a module with
# register(subparsers): gpurack-lab (lab/) adds `gpurack lab`.
ENTRY_POINT_GROUP = "gpurack.commands"

Handler = Callable[[argparse.Namespace], int]


class ArgumentParser(argparse.ArgumentParser):
    """argparse that raises UsageError (exit 64, one line) instead of printing usage and exiting 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def build_parser() -> ArgumentParser:
    """The full `gpurack` parser with every registered subcommand."""
    common = ArgumentParser(add_help=False)
    # SUPPRESS keeps a subcommand's default from overwriting `gpurack --debug <command>`.
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    parser = ArgumentParser(prog="gpurack", description=__doc__, parents=[common])
    parser.add_argument("--version", action="version", version=f"gpurack {__version__}")
    parser.set_defaults(debug=False)
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=ArgumentParser)
    for module in command_modules():
        module.register(subparsers)
    for sub in subparsers.choices.values():
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    return parser


def command_modules() -> tuple[ModuleType, ...]:
    """The built-in command modules, then the installed `gpurack.commands` entry points by name."""
    found = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)
    plugins = [ep.load() for ep in found]
    return tuple(dict.fromkeys([*COMMANDS, *plugins]))


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
