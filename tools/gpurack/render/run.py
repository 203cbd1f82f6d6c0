"""Live playbook progress, the run recap, a patch run's outcomes and the capture summary."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from gpurack.formatting import MISSING, change, duration, yes_no
from gpurack.render.console import stdout_console
from gpurack.render.shapes import CaptureShape, PatchShape, RunResultShape, TaskEventShape
from gpurack.render.text import table
from gpurack.render.verdicts import verdict_text

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


OUTCOME_STYLE = {"held": "bold red", "refused": "yellow", "patched": "green", "unchanged": "dim"}
_STEPS = ("drain", "update", "reboot", "validate")


def patch_outcomes(patches: Sequence[PatchShape]) -> None:
    """What a patch run did to each host: its outcome, then why, the steps' times, kernel and
    driver before and after, and the validation verdict, one line each (narrow terminals too)."""
    out = table("patch", "host", "outcome", "what happened")
    for p in patches:
        node = p.host if not p.node or p.node == p.host else f"{p.host} ({p.node})"
        outcome = p.outcome or "unknown"
        out.add_row(node, Text(outcome, style=OUTCOME_STYLE.get(outcome, "")), _patch_details(p))
    stdout_console().print(out)


def _patch_details(p: PatchShape) -> Text:
    times = zip(_STEPS, (p.drain_s, p.update_s, p.reboot_s, p.validation_s), strict=True)
    steps = [f"{step} {duration(s)}" for step, s in times if s is not None]
    if p.rebooted is not None:
        steps.append(f"rebooted {yes_no(p.rebooted)}")
    lines = [p.reason or "", ", ".join(steps)]
    for name, before, after in (
        ("kernel", p.kernel_before, p.kernel_after),
        ("driver", p.driver_before, p.driver_after),
    ):
        if before or after:
            lines.append(f"{name} {change(before, after)}")
    details = Text("\n".join(line for line in lines if line))
    if p.validation:
        details.append("\nvalidation " if details else "validation ").append(verdict_text(p.validation))
    return details if details else Text(MISSING)


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
