"""Live playbook progress, the run recap and the capture summary."""

from __future__ import annotations

from rich.text import Text

from gpurack.render.console import stdout_console
from gpurack.render.shapes import CaptureShape, RunResultShape, TaskEventShape
from gpurack.render.text import table

EVENT_STYLE = {
    "ok": "green",
    "changed": "yellow",
    "failed": "bold red",
    "ignored": "cyan",
    "unreachable": "bold magenta",
    "skipped": "dim",
}


def task_event(event: TaskEventShape) -> None:
    """One line of live run progress: a play or task header, or a host's result."""
    console = stdout_console()
    if event.kind == "play":
        console.print(Text.assemble(("PLAY ", "bold"), event.task))
    elif event.kind == "task":
        console.print(Text.assemble(("  TASK ", "bold"), event.task))
    else:
        style = EVENT_STYLE.get(event.kind, "")
        tail = f": {event.message}" if event.message and event.kind in ("failed", "unreachable") else ""
        console.print(Text.assemble("    ", (f"{event.kind:<11}", style), f" {event.host}{tail}"))


def run_recap(result: RunResultShape) -> None:
    """The closing table of a run: per-host counters, then the outcome and artifacts folder."""
    out = table("recap", "host", "ok", "changed", "failed", "unreachable", "skipped")
    for h in result.hosts:
        style = "red" if h.failed or h.unreachable else ""
        row = (h.host, str(h.ok), str(h.changed), str(h.failed), str(h.unreachable), str(h.skipped))
        out.add_row(*row, style=style)
    console = stdout_console()
    console.print(out)
    console.print(f"{result.status} (exit {int(result.exit_code)}); artifacts in {result.artifact_dir}")


def capture_summary(result: CaptureShape) -> None:
    """Table of the commands a capture ran, then where it went."""
    out = table(f"capture of {result.host}", "file", "command", "rc")
    out.columns[2].justify = "right"
    out.title_justify = "center"
    for record in result.commands:
        style = "dim" if record.rc == 127 else ("yellow" if record.rc else "")
        out.add_row(record.file, record.command, str(record.rc), style=style)
    console = stdout_console()
    console.print(out)
    console.print(
        f"wrote {len(result.commands)} command files, {len(result.files)} plain files and "
        f"{result.sysfs_files} sysfs attributes to {result.output}"
    )
