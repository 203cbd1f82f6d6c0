"""report.md: the summary, a table of nodes, then each node with its findings and their evidence.

Every text that comes from a host or a check goes through `gpurack.mdtext`: `escape()`, or
`code()` inside backticks, `cell_code()` in a table cell; evidence lines go into a fenced block
longer than any run of backticks in them. No host text becomes Markdown markup.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpurack import formatting
from gpurack.mdtext import cell_code, code, escape
from gpurack.report import text
from gpurack.report.findings import is_problem

_BAR_CELLS = 10


def _fence(lines: Sequence[str]) -> str:
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |\n"


def _table(header: Sequence[str], rows: Iterable[Iterable[str]]) -> str:
    return _row(header) + _row("---" for _ in header) + "".join(_row(r) for r in rows)


def _bar(percent: float | None) -> str:
    if percent is None:
        return formatting.MISSING
    filled = max(0, min(_BAR_CELLS, round(percent / _BAR_CELLS)))
    return f"{formatting.percent(percent)} {'█' * filled}{'░' * (_BAR_CELLS - filled)}"


def markdown(doc: Mapping[str, Any]) -> str:
    """The whole report.md."""
    out = [
        f"# gpurack report: run {escape(doc['run']['id'])}\n\n",
        f"{escape(text.run_line(doc))}\n\n",
        f"Run verdict: **{escape(text.verdict_word(doc['summary']['verdict']))}**\n\n",
        f"**{escape(text.summary_line(doc))}**\n\n",
    ]
    if doc["nodes"]:
        header = ("node", "verdict", "pool", "GPUs", "driver", "fail", "warn")
        out.append(_table(header, (_node_row(n) for n in doc["nodes"])))
    out.append(_acceptance(doc.get("acceptance")))
    out.append(_patch(doc.get("patch")))
    out.append(_results(doc.get("results")))
    out.append(_homogeneity(doc.get("homogeneity") or {}))
    out.extend(_node(n) for n in doc["nodes"])
    return "".join(out)


def _acceptance(acc: Mapping[str, Any] | None) -> str:
    """`## Acceptance`: an accept run's rows in step order; nothing for other runs."""
    if not acc:
        return ""
    header = ("verdict", "step", "measured", "limit", "reason")
    rows = (
        [
            escape(text.verdict_word(r["verdict"])),
            f"{escape(text.check_title(r))} ({cell_code(r['id'])})",
            escape(text.value(r, "measured")),
            escape(text.value(r, "expected")),
            escape(r["reason"]),
        ]
        for r in acc["rows"]
    )
    span = (
        f"{escape(formatting.timestamp(acc['started']))} to {escape(formatting.timestamp(acc['finished']))}"
    )
    if acc.get("test") == "inference":
        facts = f"Service {escape(acc['queue'])} of {escape(acc['team'])} tested {span}"
    else:
        facts = f"Queue wait {escape(formatting.duration(acc['queue_wait_s']))}; GPUs held {span}"
    return f"## Acceptance\n\n{facts}\n\n{_table(header, rows)}\n"


def _results(results: Sequence[Mapping[str, Any]] | None) -> str:
    """`## Results`: a conformance run's results about the cluster, in order; nothing for other runs."""
    if not results:
        return ""
    header = ("verdict", "test", "requirement", "reason")
    rows = (
        [
            escape(text.verdict_word(r["verdict"])),
            cell_code(r["id"]),
            escape(r["component"]),
            escape(r["reason"]),
        ]
        for r in results
    )
    return f"## Results\n\n{_table(header, rows)}\n"


def _patch(patch: Mapping[str, Any] | None) -> str:
    """`## Patch`: what a patch run did to each node, with the totals; nothing for other runs."""
    if not patch:
        return ""
    header = (
        "node", "outcome", "reason", "drain", "update", "reboot", "validate",
        "kernel", "driver", "rebooted", "validation",
    )  # fmt: skip
    rows = (
        [
            escape(text.patch_node(n)),
            escape(text.outcome_word(n["outcome"])),
            escape(n["reason"]),
            *(escape(formatting.duration(n[step])) for step in text.PATCH_STEPS),
            escape(formatting.change(n["kernel_before"], n["kernel_after"])),
            escape(formatting.change(n["driver_before"], n["driver_after"])),
            escape(formatting.yes_no(n["rebooted"])),
            escape(text.validation_word(n["validation"])),
        ]
        for n in patch["nodes"]
    )
    return f"## Patch\n\n{escape(text.patch_section_line(patch))}\n\n{_table(header, rows)}\n"


def _homogeneity(found: Mapping[str, Any]) -> str:
    """`## Pool homogeneity`: one line per outlier and per split; nothing when the pools agree."""
    items = [*found.get("outliers", []), *found.get("splits", [])]
    if not items:
        return ""
    lines = "".join(f"- {escape(item['sentence'])}\n" for item in items)
    return f"## Pool homogeneity\n\n{lines}\n"


def _node_row(node: Mapping[str, Any]) -> list[str]:
    return [
        escape(node["host"]),
        escape(text.verdict_word(node["verdict"])),
        escape(node["pool"]),
        str(len(node["gpus"])),
        escape(node["software"]["driver"]),
        str(node["counts"]["fail"]),
        str(node["counts"]["warn"]),
    ]


def _node(node: Mapping[str, Any]) -> str:
    sw = node["software"]
    facts = (
        ("pool", node["pool"]),
        ("Kubernetes node", node["k8s_node_name"]),
        ("source", node["source"]),
        ("kernel", sw["kernel"]),
        ("driver", sw["driver"]),
        ("CUDA", sw["cuda"]),
        ("results", text.result_counts(node)),
    )
    out = [
        f"\n## {escape(text.verdict_word(node['verdict']))} {escape(node['host'])}\n\n",
        " · ".join(f"{name} {escape(item)}" for name, item in facts) + "\n\n",
    ]
    if node["labels"]:
        out.append("Labels: " + ", ".join(code(f"{k}={v}") for k, v in node["labels"].items()) + "\n\n")
    if node["gpus"]:
        out.append(_gpus(node["gpus"]) + "\n")
    if not node["findings"]:
        out.append("No check results recorded for this node.\n")
        return "".join(out)
    out.append(_findings(node["findings"]))
    problems = [f for f in node["findings"] if is_problem(f)]
    if problems:
        out.append(f"\n### Evidence ({escape(node['host'])})\n")
        out.extend(_evidence(f) for f in problems)
    return "".join(out)


def _gpus(gpus: Sequence[Mapping[str, Any]]) -> str:
    header = ("GPU", "bus id", "name", "serial", "UUID", "VBIOS", "memory", "PCIe link")
    rows = (
        [
            escape(g["index"]),
            escape(g["bus_id"]),
            escape(g["name"]),
            escape(g["serial"]),
            escape(g["uuid"]),
            escape(g["vbios"]),
            escape(formatting.mib(g["memory_mib"])),
            escape(formatting.pcie_now_max(g["pcie"])),
        ]
        for g in gpus
    )
    return _table(header, rows)


def _findings(findings: Sequence[Mapping[str, Any]]) -> str:
    """The findings table; the share-of-limit column only where a finding was measured against one."""
    with_bars = any(f["percent"] is not None for f in findings)
    header = ["verdict", "check", "where", "measured", "expected", "reason", "remediation"]
    if with_bars:
        header.insert(5, "% of limit")
    rows = []
    for f in findings:
        row = [
            escape(text.verdict_word(f["verdict"])),
            f"{escape(text.check_title(f))} ({cell_code(f['id'])})",
            escape(f["where"]),
            escape(text.value(f, "measured")),
            escape(text.value(f, "expected")),
            escape(f["reason"]),
            escape(f["remediation"]),
        ]
        if with_bars:
            row.insert(5, _bar(f["percent"]))
        rows.append(row)
    return _table(header, rows)


def _evidence(finding: Mapping[str, Any]) -> str:
    out = [f"\n**{escape(finding['id'])}** on {escape(finding['where'])}\n"]
    if finding["limit_source"]:
        out.append(f"\nLimit: {escape(finding['limit_source'])}\n")
    several = len(finding["evidence"]) > 1
    for block in finding["evidence"]:
        source = escape(block["source"] or "no source recorded")
        # A fixed word first: a component name at the start of a line could open a list or heading.
        out.append(
            f"\nSource on {escape(block['where'])}: {source}\n" if several else f"\nSource: {source}\n"
        )
        if block["lines"]:
            fence = _fence(block["lines"])
            out.append(f"\n{fence}text\n" + "\n".join(block["lines"]) + f"\n{fence}\n")
    return "".join(out)
