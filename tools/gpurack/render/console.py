"""Consoles, machine output, progress and the one-line errors on stderr."""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn

from gpurack.errors import ExitCode, GpurackError

PROG = "gpurack"


def stdout_console(width: int | None = None, soft_wrap: bool = False) -> Console:
    """A console on the current stdout (looked up per call, so redirection and capsys work)."""
    # markup=False: facts, reasons and Ansible messages hold brackets ("[N/A]", "[Errno 111]")
    # that rich would otherwise parse as style tags; styles are applied through Text instead.
    return Console(file=sys.stdout, highlight=False, markup=False, soft_wrap=soft_wrap, width=width)


def stderr_console() -> Console:
    """A console on the current stderr; its log lines carry a time but no file:line of ours."""
    return Console(file=sys.stderr, highlight=False, markup=False, log_path=False)


def error(exc: GpurackError, debug: bool = False) -> int:
    """Print an expected error as one line (plus its detail lines) on stderr; return its exit code."""
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    sys.stderr.write(f"{PROG}: {exc.message}\n")
    for detail in exc.details:
        sys.stderr.write(f"  - {detail}\n")
    return int(exc.code)


def warning(message: str) -> None:
    """Print one warning line on stderr (`gpurack: warning: ...`); the exit code is not changed."""
    sys.stderr.write(f"{PROG}: warning: {message}\n")


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
