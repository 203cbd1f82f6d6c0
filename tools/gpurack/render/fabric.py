"""`gpurack fabric check` for people: the switches read, each server's findings grouped, a summary."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import is_finding
from rich.text import Text

from gpurack.render.console import stdout_console
from gpurack.render.results import sort_results
from gpurack.render.text import table, text
from gpurack.render.verdicts import style_of, verdict_text


def fabric_report(check: Mapping[str, Any]) -> None:
    """The switches (read, or why not), then per server its failures and warnings, then one
    row per server; `check` is FabricCheck.as_dict()'s shape."""
    console = stdout_console()
    switches = table("switches", "switch", "platform", "read")
    for name, switch in sorted(check["switches"].items()):
        read = Text("yes") if switch["read"] else Text("no", style="red")
        switches.add_row(name, text(switch.get("platform")), read)
    console.print(switches)
    for name, switch in sorted(check["switches"].items()):
        if not switch["read"]:
            # Its NICs are skipped with this reason; the line is the switch's one line.
            console.print(Text.assemble((f"{name} not read", "red"), f": {text(switch['error'])}"))
    servers = check["servers"]
    for server, entry in servers.items():
        findings = [r for r in sort_results(entry["results"]) if is_finding(r.get("verdict"))]
        if not findings:
            continue
        console.print(Text(server, style="bold"))
        for result in findings:
            verdict = str(result.get("verdict"))
            console.print(
                Text.assemble(
                    "  ",
                    (verdict, style_of(verdict)),
                    f" {text(result.get('title'))}: {text(result.get('reason'))}",
                )
            )
            if verdict == "fail" and result.get("remediation"):
                console.print(f"      fix: {text(result.get('remediation'))}", style="dim")
    summary = table("servers", "server", "NICs", "pass", "warn", "fail", "skip", "verdict")
    for server, entry in servers.items():
        nics = {r.get("component") for r in entry["results"]}
        counts = entry["summary"]
        summary.add_row(
            server,
            str(len(nics)),
            *(str(counts.get(v, 0)) for v in ("pass", "warn", "fail", "skip")),
            verdict_text(entry["summary"].get("verdict")),
        )
    console.print(summary)
