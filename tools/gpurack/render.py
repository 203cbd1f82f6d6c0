"""Everything the operator sees: rich tables and progress on stdout, one-line errors on stderr."""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn
from rich.table import Table
from rich.text import Text

from gpurack.errors import ExitCode, GpurackError

if TYPE_CHECKING:
    from collections.abc import Callable

    from gpurack.capture import CaptureResult
    from gpurack.runner import RunResult, TaskEvent

PROG = "gpurack"
VERDICT_ORDER = {"fail": 0, "warn": 1, "skip": 2, "pass": 3}
VERDICT_STYLE = {"fail": "bold red", "warn": "yellow", "skip": "dim", "pass": "green"}
EVENT_STYLE = {
    "ok": "green",
    "changed": "yellow",
    "failed": "bold red",
    "ignored": "cyan",
    "unreachable": "bold magenta",
    "skipped": "dim",
}


def _console() -> Console:
    """A console on the current stdout (looked up per call, so redirection and capsys work)."""
    # markup=False: facts, reasons and Ansible messages hold brackets ("[N/A]", "[Errno 111]")
    # that rich would otherwise parse as style tags; styles are applied through Text instead.
    return Console(file=sys.stdout, highlight=False, markup=False, soft_wrap=False)


def error(exc: GpurackError, debug: bool = False) -> int:
    """Print an expected error as one line (plus its detail lines) on stderr; return its exit code."""
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    sys.stderr.write(f"{PROG}: {exc.message}\n")
    for detail in exc.details:
        sys.stderr.write(f"  - {detail}\n")
    return int(exc.code)


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
        console=Console(file=sys.stderr),
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
    console = Console(file=sys.stderr, highlight=False, markup=False)
    with console.status(label) as spinner:

        def say(message: str) -> None:
            spinner.update(f"{label}: {message}")
            console.log(message)

        yield say


def capture_summary(result: CaptureResult) -> None:
    """Table of the commands a capture ran, then where it went."""
    table = Table(title=f"capture of {result.host}", show_lines=False)
    table.add_column("file")
    table.add_column("command")
    table.add_column("rc", justify="right")
    for record in result.commands:
        style = "dim" if record.rc == 127 else ("yellow" if record.rc else "")
        table.add_row(record.file, record.command, str(record.rc), style=style)
    console = _console()
    console.print(table)
    console.print(
        f"wrote {len(result.commands)} command files, {len(result.files)} plain files and "
        f"{result.sysfs_files} sysfs attributes to {result.output}"
    )


def facts_tables(host: str, facts: Mapping[str, Mapping[str, Any]], labels: Mapping[str, str]) -> None:
    """Human view of a node's facts: OS line, GPUs, NICs, disks, labels."""
    console = _console()
    os_facts = facts.get("gpurack_os", {})
    distribution = (os_facts.get("distribution") or {}).get("pretty_name")
    kernel = _text(os_facts.get("kernel"))
    console.print(Text.assemble((host, "bold"), f"  {_text(distribution)}  kernel {kernel}"))
    console.print(_gpu_table(facts.get("gpurack_gpu", {})))
    console.print(_nic_table(facts.get("gpurack_nic", {})))
    console.print(_disk_table(facts.get("gpurack_nvme", {})))
    console.print(_pairs_table("labels", labels))


def _gpu_table(gpu: Mapping[str, Any]) -> Table:
    """GPUs: index, model, memory, PCIe link, bus id, NUMA node."""
    title = f"GPUs (driver {_text(gpu.get('driver_version'))}, CUDA {_text(gpu.get('cuda_version'))})"
    table = _table(title, "#", "model", "memory MiB", "PCIe", "bus id", "NUMA")
    for card in gpu.get("gpus") or []:
        table.add_row(
            _text(card.get("index")),
            _text(card.get("name")),
            _text(card.get("memory_total_mib")),
            _pcie(card.get("pcie") or {}),
            _text(card.get("bus_id")),
            _text(card.get("numa_node")),
        )
    _note_unavailable(table, gpu)
    return table


def _nic_table(nic: Mapping[str, Any]) -> Table:
    """Network interfaces and RDMA ports in one table."""
    table = _table("NICs", "name", "kind", "state", "speed", "MTU / link layer")
    for port in nic.get("rdma") or []:
        table.add_row(
            f"{_text(port.get('device'))}/{_text(port.get('port'))}",
            "rdma",
            _text(port.get("state")),
            f"{_text(port.get('rate_gbps'))} Gb/s",
            _text(port.get("link_layer")),
        )
    for net in nic.get("net") or []:
        speed = net.get("speed_mbps")
        table.add_row(
            _text(net.get("name")),
            "net",
            _text(net.get("operstate")),
            "-" if speed is None else f"{speed} Mb/s",
            _text(net.get("mtu")),
        )
    _note_unavailable(table, nic)
    return table


def _disk_table(nvme: Mapping[str, Any]) -> Table:
    """NVMe disks: name, model, serial, size, whether the OS lives there."""
    table = _table("NVMe disks", "name", "model", "serial", "size GB", "OS disk")
    for disk in nvme.get("disks") or []:
        size = disk.get("size_bytes")
        table.add_row(
            _text(disk.get("name")),
            _text(disk.get("model")),
            _text(disk.get("serial")),
            "-" if size is None else f"{size / 1e9:.0f}",
            _text(disk.get("is_os_disk")),
        )
    _note_unavailable(table, nvme)
    return table


def _pairs_table(title: str, pairs: Mapping[str, Any]) -> Table:
    """A two-column key/value table."""
    table = _table(title, "key", "value")
    for key, value in pairs.items():
        table.add_row(key, _text(value))
    return table


def results_table(host: str, results: Sequence[Mapping[str, Any]], summary: Mapping[str, Any]) -> None:
    """Check results (failures first), what to do about each failure, the skips, then the verdict."""
    ordered = sort_results(results)
    # Measured tiers report each figure as a share of its limit; facts-only checks have none.
    measured = any(r.get("percent") is not None for r in ordered)
    columns = ["verdict", "check", "component", "measured", "expected"] + (["% of limit"] if measured else [])
    table = _table(f"validation of {host}", *columns)
    for result in ordered:
        verdict = str(result.get("verdict", ""))
        if verdict == "skip":
            continue
        row: list[Text | str] = [
            Text(verdict, style=VERDICT_STYLE.get(verdict, "")),
            _text(result.get("title") or result.get("id")),
            _text(result.get("component")),
            _with_unit(result.get("measured"), result.get("unit")),
            _with_unit(result.get("expected"), result.get("unit")),
        ]
        if measured:
            percent = result.get("percent")
            row.append(f"{percent:.1f} %" if isinstance(percent, int | float) else "")
        table.add_row(*row)
    console = _console()
    console.print(table)
    for result in ordered:
        verdict = str(result.get("verdict", ""))
        if verdict in ("fail", "warn"):
            title, reason = _text(result.get("title")), _text(result.get("reason"))
            console.print(Text.assemble((verdict, VERDICT_STYLE[verdict]), f" {title}: {reason}"))
            console.print(f"  fix: {_text(result.get('remediation'))}")
    skipped = [r for r in ordered if r.get("verdict") == "skip"]
    if skipped:
        console.print(f"skipped ({len(skipped)}):", style="dim")
        for result in skipped:
            console.print(f"  {_text(result.get('title'))}: {_text(result.get('reason'))}", style="dim")
    console.print(_summary_line(summary))


def results_markdown(host: str, results: Sequence[Mapping[str, Any]], summary: Mapping[str, Any]) -> str:
    """The same report as results_table, as Markdown."""
    lines = [f"# Validation of {host}", "", _summary_line(summary), ""]
    lines += ["| verdict | component | check | measured | expected | hint |", "|---|---|---|---|---|---|"]
    for r in sort_results(results):
        cells = [
            str(r.get("verdict", "")),
            _text(r.get("component")),
            _text(r.get("title") or r.get("id")),
            _with_unit(r.get("measured"), r.get("unit")),
            _with_unit(r.get("expected"), r.get("unit")),
            _hint(r),
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def sort_results(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Results ordered fail, warn, skip, pass, keeping the checks' own order within each."""
    return sorted(results, key=lambda r: VERDICT_ORDER.get(str(r.get("verdict")), len(VERDICT_ORDER)))


def _summary_line(summary: Mapping[str, Any]) -> str:
    """`verdict: fail (pass 10, warn 1, fail 2, skip 3)`."""
    counts = ", ".join(f"{key} {summary.get(key, 0)}" for key in ("pass", "warn", "fail", "skip"))
    return f"verdict: {_text(summary.get('verdict'))} ({counts})"


def _hint(result: Mapping[str, Any]) -> str:
    """What to do about a result: the remediation when it did not pass, the reason when skipped."""
    verdict = result.get("verdict")
    if verdict == "skip":
        return _text(result.get("reason"))
    if verdict in ("fail", "warn"):
        return _text(result.get("remediation") or result.get("reason"))
    return ""


def task_event(event: TaskEvent) -> None:
    """One line of live run progress: a play or task header, or a host's result."""
    console = _console()
    if event.kind == "play":
        console.print(Text.assemble(("PLAY ", "bold"), event.task))
    elif event.kind == "task":
        console.print(Text.assemble(("  TASK ", "bold"), event.task))
    else:
        style = EVENT_STYLE.get(event.kind, "")
        tail = f": {event.message}" if event.message and event.kind in ("failed", "unreachable") else ""
        console.print(Text.assemble("    ", (f"{event.kind:<11}", style), f" {event.host}{tail}"))


def run_recap(result: RunResult) -> None:
    """The closing table of a run: per-host counters, then the outcome and artifacts folder."""
    table = _table("recap", "host", "ok", "changed", "failed", "unreachable", "skipped")
    for h in result.hosts:
        style = "red" if h.failed or h.unreachable else ""
        row = (h.host, str(h.ok), str(h.changed), str(h.failed), str(h.unreachable), str(h.skipped))
        table.add_row(*row, style=style)
    console = _console()
    console.print(table)
    console.print(f"{result.status} (exit {int(result.exit_code)}); artifacts in {result.artifact_dir}")


def _table(title: str, *columns: str) -> Table:
    """A titled table with the given column headers."""
    table = Table(title=title, title_justify="left", caption_justify="left")
    for column in columns:
        table.add_column(column)
    return table


def _note_unavailable(table: Table, fact: Mapping[str, Any]) -> None:
    """Caption a table whose fact was not available with the reason."""
    if fact.get("available") is False:
        table.caption = f"not available: {_text(fact.get('reason'))}"
    elif not table.row_count:
        table.caption = "none found"


def _pcie(pcie: Mapping[str, Any]) -> str:
    """`Gen5 x16` (with the maximum when the link runs below it)."""
    now = f"Gen{_text(pcie.get('gen_current'))} x{_text(pcie.get('width_current'))}"
    top = f"Gen{_text(pcie.get('gen_max'))} x{_text(pcie.get('width_max'))}"
    return now if top in (now, "Gen- x-") else f"{now} (max {top})"


def _with_unit(value: Any, unit: Any) -> str:
    """A value followed by its unit, `-` when unknown."""
    if value is None:
        return "-"
    return f"{_text(value)} {unit}" if unit else _text(value)


def _text(value: Any) -> str:
    """Display form of a fact value: `-` for null, JSON for containers."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{key} {_text(item)}" for key, item in value.items()) or "none"
    if isinstance(value, list):
        return ", ".join(_text(item) for item in value) or "none"
    return str(value)
