"""Consoles, machine output, progress and the one-line errors on stderr."""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import yaml
from rich.console import Console, ConsoleOptions, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn
from rich.segment import Segment

from gpurack.errors import ExitCode, GpurackError
from gpurack.termtext import one_line, printable

PROG = "gpurack"


class SafeConsole(Console):
    """A rich Console that shows the characters a terminal acts on as escapes (gpurack.termtext).

    Every print, log, table cell and progress line is rendered through `render`, so this is
    the one place where text from hosts, switches, the database or an inventory is made safe
    for a terminal. rich's own styles and cursor controls are not text and pass unchanged.
    """

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterator[Segment]:
        """Console.render, with the text of every segment made printable."""
        for segment in super().render(renderable, options):
            if segment.control or segment.text.isprintable():
                yield segment
            else:
                yield Segment(printable(segment.text), segment.style, segment.control)


def stdout_console(width: int | None = None, soft_wrap: bool = False) -> Console:
    """A console on the current stdout (looked up per call, so redirection and capsys work)."""
    # markup=False: facts, reasons and Ansible messages hold brackets ("[N/A]", "[Errno 111]")
    # that rich would otherwise parse as style tags; styles are applied through Text instead.
    return SafeConsole(file=sys.stdout, highlight=False, markup=False, soft_wrap=soft_wrap, width=width)


def stderr_console() -> Console:
    """A console on the current stderr; its log lines carry a time but no file:line of ours."""
    return SafeConsole(file=sys.stderr, highlight=False, markup=False, log_path=False)


def error(exc: GpurackError, debug: bool = False) -> int:
    """Print an expected error as one line (plus its detail lines) on stderr; return its exit code."""
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    sys.stderr.write(f"{PROG}: {one_line(exc.message)}\n")
    for detail in exc.details:
        sys.stderr.write(f"  - {one_line(detail)}\n")
    return int(exc.code)


def warning(message: str) -> None:
    """Print one warning line on stderr (`gpurack: warning: ...`); the exit code is not changed."""
    sys.stderr.write(f"{PROG}: warning: {one_line(message)}\n")


def internal_error(exc: BaseException, debug: bool = False) -> int:
    """Report a bug: the traceback with --debug, else one line asking for it."""
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    sys.stderr.write(f"{PROG}: internal error ({type(exc).__name__}), rerun with --debug\n")
    return int(ExitCode.INTERNAL)


def interrupted() -> int:
    """Acknowledge Ctrl-C on stderr; return 130."""
    sys.stderr.write(f"{PROG}: interrupted\n")
    return int(ExitCode.INTERRUPTED)


def line(text: str) -> None:
    """Print one line of plain text on stdout (a written file's path, a summary), made printable."""
    sys.stdout.write(one_line(text) + "\n")


def json_out(data: Any) -> None:
    """Print data as indented JSON, unstyled, for machines."""
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def yaml_out(data: Any) -> None:
    """Print data as block YAML in its own key order."""
    sys.stdout.write(yaml.safe_dump(data, sort_keys=False, default_flow_style=False))


@contextmanager
def progress(label: str, total: int) -> Iterator[Callable[[str], None]]:
    """A progress bar on stderr; yields step(description), to call once per step."""
    bar = Progress(
        SpinnerColumn(),
        TextColumn("{task.fields[label]} {task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        console=stderr_console(),
        transient=True,
    )
    with bar:
        task = bar.add_task("", total=total, label=label)
        started = False

        def step(description: str) -> None:
            nonlocal started
            bar.update(task, description=description, advance=1 if started else 0)
            started = True

        yield step
        bar.update(task, completed=total)


@contextmanager
def status(label: str) -> Iterator[Callable[[str], None]]:
    """A spinner on stderr for a long step; yields say(message) to update it and log the line."""
    console = stderr_console()
    with console.status(label) as spinner:

        def say(message: str) -> None:
            spinner.update(f"{label}: {message}")
            console.log(message)

        yield say
