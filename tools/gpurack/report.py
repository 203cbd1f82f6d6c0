"""`gpurack report RUN`: one run's nodes and checks as Markdown, one self-contained HTML page and JSON.

`build()` turns a stored run into one dict that follows `gpurack/data/report.schema.json`
(docs/report.md); `markdown()` and `html_page()` render that dict, so the three documents
always agree. Failing nodes come first, and within a node failing checks.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.spec import SPECS as BY_ID

from gpurack import __version__
from gpurack.drift import GpuState
from gpurack.errors import ExitCode, UsageError
from gpurack.inventory import RunView, SnapshotView, open_store

SCHEMA_VERSION = 1
SCHEMA_ID = "urn:gpurack:schema:report:1"
FORMATS = ("md", "html", "json")
FILES = {"md": "report.md", "html": "report.html", "json": "report.json"}
# Worst first; a node without any result ("unchecked") sorts before passing nodes.
NODE_ORDER = {"fail": 0, "warn": 1, "skip": 2, None: 3, "pass": 4}
CHECK_ORDER = {"fail": 0, "warn": 1, "skip": 2, "pass": 3}
VERDICTS = ("fail", "warn", "pass", "skip")


# -- the document ---------------------------------------------------------------------------


def build(view: RunView) -> dict[str, Any]:
    """The report of one run as a dict following report.schema.json."""
    nodes = sorted((_node(n) for n in view.nodes), key=lambda n: (NODE_ORDER[n["verdict"]], n["host"]))
    summary: dict[str, Any] = {"nodes": len(nodes), **dict.fromkeys(VERDICTS, 0), "unchecked": 0}
    for node in nodes:
        summary[node["verdict"] or "unchecked"] += 1
    summary["verdict"] = "fail" if summary["fail"] else "pass"
    return {
        "schema_version": SCHEMA_VERSION,
        "generator": f"gpurack {__version__}",
        "run": {
            "id": view.run_id,
            "kind": view.kind,
            "source": view.source,
            "playbook": view.playbook,
            "status": view.status,
            "started": view.started.isoformat(),
            "finished": None if view.finished is None else view.finished.isoformat(),
        },
        "summary": summary,
        "nodes": nodes,
    }


def _node(view: SnapshotView) -> dict[str, Any]:
    checks = sorted((_check(r) for r in view.results), key=lambda c: CHECK_ORDER.get(c["verdict"], 9))
    counts = dict.fromkeys(VERDICTS, 0)
    for check in checks:
        if check["verdict"] in counts:
            counts[check["verdict"]] += 1
    verdict = view.verdict if view.verdict in NODE_ORDER else None
    return {
        "host": view.host,
        "pool": view.pool,
        "k8s_node_name": view.k8s_node_name,
        "source": view.source,
        "verdict": verdict,
        "labels": {str(k): str(v) for k, v in sorted(view.labels.items())},
        "software": {"kernel": view.state.kernel, "driver": view.state.driver, "cuda": view.state.cuda},
        "gpus": [_gpu(g) for g in view.state.gpus],
        "counts": counts,
        "checks": checks,
    }


def _gpu(gpu: GpuState) -> dict[str, Any]:
    return {
        "index": gpu.index,
        "bus_id": gpu.bus_id,
        "name": gpu.name,
        "serial": gpu.serial,
        "uuid": gpu.uuid,
        "vbios": gpu.vbios,
        "memory_mib": gpu.memory_mib,
        "pcie": {
            "gen_current": gpu.pcie_gen_current,
            "gen_max": gpu.pcie_gen_max,
            "width_current": gpu.pcie_width_current,
            "width_max": gpu.pcie_width_max,
        },
    }


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _percent(result: Mapping[str, Any]) -> float | None:
    """The stored share of the limit; for runs recorded before it was stored, measured / limit."""
    stored = _number(result.get("percent"))
    if stored is not None:
        return round(stored, 1)
    spec = BY_ID.get(str(result.get("id")))
    measured, expected = _number(result.get("measured")), _number(result.get("expected"))
    # Only checks whose `expected` is the model limit itself (not a pass ratio) can be derived.
    if spec is None or spec.model_field is None or measured is None or not expected or expected <= 0:
        return None
    return round(100 * measured / expected, 1)


def _thresholds(check_id: str) -> dict[str, float] | None:
    spec = BY_ID.get(check_id)
    if spec is None or spec.pass_ratio is None or spec.warn_ratio is None:
        return None
    return {"pass": round(100 * spec.pass_ratio, 1), "warn": round(100 * spec.warn_ratio, 1)}


def _check(result: Mapping[str, Any]) -> dict[str, Any]:
    check_id = str(result.get("id"))
    raw = result.get("evidence")
    evidence: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    raw_lines = evidence.get("lines")
    lines: list[Any] = raw_lines if isinstance(raw_lines, list) else []
    percent = _percent(result)
    return {
        "id": check_id,
        "title": _opt(result.get("title")),
        "tier": _opt(result.get("tier")),
        "component": _opt(result.get("component")),
        "verdict": str(result.get("verdict")),
        "measured": result.get("measured"),
        "expected": result.get("expected"),
        "unit": _opt(result.get("unit")),
        "percent": percent,
        "thresholds": _thresholds(check_id) if percent is not None else None,
        "reason": _opt(result.get("reason")),
        "remediation": _opt(result.get("remediation")),
        "limit_source": _opt(result.get("limit_source")),
        "evidence": {"source": _opt(evidence.get("source")), "lines": [str(line) for line in lines]},
    }


def _opt(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


# -- shared formatting ----------------------------------------------------------------------


def _value(value: Any, unit: str | None = None) -> str:
    """Display form of a measured or expected value: numbers with the unit, JSON for containers."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, float):
        text = f"{value:g}"
    elif isinstance(value, (dict, list)):
        text = json.dumps(value, separators=(", ", ": "))
    else:
        text = str(value)
    return f"{text} {unit}" if unit and isinstance(value, (int, float)) else text


def _pcie(pcie: Mapping[str, Any]) -> str:
    def link(gen: Any, width: Any) -> str:
        return "-" if gen is None and width is None else f"Gen{gen or '?'} x{width or '?'}"

    now = link(pcie.get("gen_current"), pcie.get("width_current"))
    top = link(pcie.get("gen_max"), pcie.get("width_max"))
    return now if top in (now, "-") else f"{now} / {top}"


def _run_line(doc: Mapping[str, Any]) -> str:
    run = doc["run"]
    parts = [f"{run['kind']} from {run['source']}", f"status {run['status']}", f"started {run['started']}"]
    if run["playbook"]:
        parts.insert(1, f"playbook {run['playbook']}")
    if run["finished"]:
        parts.append(f"finished {run['finished']}")
    return ", ".join(parts)


def _summary_line(doc: Mapping[str, Any]) -> str:
    s = doc["summary"]
    count = f"{s['nodes']} node{'s' if s['nodes'] != 1 else ''}"
    parts = [f"{s[v]} {v}" for v in ("fail", "warn", "pass", "skip") if s[v]]
    if s["unchecked"]:
        parts.append(f"{s['unchecked']} without checks")
    return f"{count}: {', '.join(parts) or 'none recorded'}"


def _verdict_word(verdict: str | None) -> str:
    return "UNCHECKED" if verdict is None else verdict.upper()


# -- Markdown -------------------------------------------------------------------------------


def _md(value: Any) -> str:
    """A table cell: HTML-escaped (Markdown renders raw HTML), pipes escaped, one line."""
    return html.escape(str(value), quote=False).replace("|", "\\|").replace("\n", " ") or "-"


def _md_bar(percent: float | None) -> str:
    if percent is None:
        return "-"
    filled = max(0, min(10, round(percent / 10)))
    return f"{percent:g}% {'█' * filled}{'░' * (10 - filled)}"


def _fence(lines: Sequence[str]) -> str:
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def markdown(doc: Mapping[str, Any]) -> str:
    """report.md: summary, a table of nodes, then each node (failing first) with its checks."""
    out = [
        f"# gpurack report: run {doc['run']['id']}\n\n",
        f"{_md(_run_line(doc))}\n\n",
        f"**{_md(_summary_line(doc))}**\n\n",
    ]
    if doc["nodes"]:
        out.append("| node | verdict | pool | GPUs | driver | fail | warn |\n")
        out.append("| --- | --- | --- | --- | --- | --- | --- |\n")
        out.extend(
            f"| {_md(n['host'])} | {_verdict_word(n['verdict'])} | {_md(n['pool'] or '-')} "
            f"| {len(n['gpus'])} | {_md(n['software']['driver'] or '-')} "
            f"| {n['counts']['fail']} | {n['counts']['warn']} |\n"
            for n in doc["nodes"]
        )
    for node in doc["nodes"]:
        out.append(_md_node(node))
    return "".join(out)


def _md_node(node: Mapping[str, Any]) -> str:
    sw = node["software"]
    out = [
        f"\n## {_verdict_word(node['verdict'])} {_md(node['host'])}\n\n",
        f"pool {_md(node['pool'] or '-')} · k8s node {_md(node['k8s_node_name'] or '-')} · "
        f"source {_md(node['source'])} · kernel {_md(sw['kernel'] or '-')} · "
        f"driver {_md(sw['driver'] or '-')} · CUDA {_md(sw['cuda'] or '-')}\n\n",
    ]
    if node["labels"]:
        labels = ", ".join(f"{_md(k)}={_md(v)}" for k, v in node["labels"].items())
        out.append(f"Labels: {labels}\n\n")
    if node["gpus"]:
        out.append("| GPU | bus id | name | serial | UUID | VBIOS | PCIe now / max |\n")
        out.append("| --- | --- | --- | --- | --- | --- | --- |\n")
        out.extend(
            f"| {_md(_value(g['index']))} | {_md(g['bus_id'] or '-')} | {_md(g['name'] or '-')} "
            f"| {_md(g['serial'] or '-')} | {_md(g['uuid'] or '-')} | {_md(g['vbios'] or '-')} "
            f"| {_md(_pcie(g['pcie']))} |\n"
            for g in node["gpus"]
        )
        out.append("\n")
    if not node["checks"]:
        out.append("No check results recorded for this node.\n")
        return "".join(out)
    out.append("| verdict | check | component | measured | expected | % of limit | reason | remediation |\n")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
    out.extend(
        f"| {c['verdict'].upper()} | {_md(c['title'] or c['id'])} (`{_md(c['id'])}`) "
        f"| {_md(c['component'] or '-')} | {_md(_value(c['measured'], c['unit']))} "
        f"| {_md(_value(c['expected'], c['unit']))} | {_md_bar(c['percent'])} "
        f"| {_md(c['reason'] or '-')} | {_md(c['remediation'] or '-')} |\n"
        for c in node["checks"]
    )
    failing = [c for c in node["checks"] if c["verdict"] in ("fail", "warn")]
    if failing:
        out.append(f"\n### Evidence ({_md(node['host'])})\n")
    for c in failing:
        out.append(
            f"\n**{_md(c['id'])}** on {_md(c['component'] or '-')}: "
            f"{_md(c['evidence']['source'] or 'no source recorded')}\n"
        )
        if c["limit_source"]:
            out.append(f"\nLimit: {_md(c['limit_source'])}\n")
        lines = c["evidence"]["lines"]
        if lines:
            fence = _fence(lines)
            out.append(f"\n{fence}text\n" + "\n".join(lines) + f"\n{fence}\n")
    return "".join(out)


# -- HTML -----------------------------------------------------------------------------------

_CSS = """
:root { --fail: #c62828; --warn: #b26a00; --pass: #2e7d32; --skip: #757575; --line: #d0d7de; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto;
       padding: 1.5rem; max-width: 1400px; color: #1f2328; }
h1 { margin: 0 0 .25rem; font-size: 1.6rem; }
h2 { margin: 0; font-size: 1.2rem; display: flex; gap: .6rem; align-items: center; }
table { border-collapse: collapse; width: 100%; margin: .6rem 0; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem .5rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
pre { background: #f6f8fa; padding: .5rem; overflow-x: auto; white-space: pre-wrap; margin: .3rem 0; }
.muted { color: #59636e; }
.badge { display: inline-block; min-width: 4.5em; text-align: center; padding: .05rem .4rem;
         border-radius: 3px; color: #fff; font-size: 12px; font-weight: 700; background: var(--skip); }
.badge.fail { background: var(--fail); } .badge.warn { background: var(--warn); }
.badge.pass { background: var(--pass); } .badge.skip { background: var(--skip); }
section.node { border: 1px solid var(--line); border-left: 6px solid var(--skip); border-radius: 4px;
               padding: .8rem 1rem; margin: 1rem 0; }
section.node.fail { border-left-color: var(--fail); } section.node.warn { border-left-color: var(--warn); }
section.node.pass { border-left-color: var(--pass); }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; margin: .5rem 0; }
dl.meta dt { font-weight: 600; } dl.meta dd { margin: 0; }
tr.fail td:first-child { color: var(--fail); } tr.warn td:first-child { color: var(--warn); }
.bar { position: relative; width: 9rem; height: .8rem; background: #eaeef2; border-radius: 2px;
       display: inline-block; vertical-align: middle; overflow: hidden; }
.bar .fill { position: absolute; left: 0; top: 0; bottom: 0; background: var(--skip); }
.bar .fill.pass { background: var(--pass); } .bar .fill.warn { background: var(--warn); }
.bar .fill.fail { background: var(--fail); }
.bar .mark { position: absolute; top: 0; bottom: 0; width: 2px; background: #1f2328; opacity: .55; }
.pct { margin-left: .4rem; font-variant-numeric: tabular-nums; }
details summary { cursor: pointer; color: #0550ae; }
td.evidence { background: #fbfcfd; }
@media print { details { display: block; } section.node { break-inside: avoid-page; } }
"""


def _h(value: Any) -> str:
    return html.escape("-" if value is None or value == "" else str(value), quote=True)


def _badge(verdict: str | None) -> str:
    return f'<span class="badge {_h(verdict or "none")}">{_h(_verdict_word(verdict))}</span>'


def _bar(check: Mapping[str, Any]) -> str:
    percent = check["percent"]
    if percent is None:
        return '<span class="muted">-</span>'
    width = max(0.0, min(100.0, percent))
    marks = ""
    thresholds = check["thresholds"] or {}
    for name in ("warn", "pass"):
        if name in thresholds:
            at = max(0.0, min(100.0, thresholds[name]))
            marks += f'<span class="mark" style="left: {at:g}%" title="{name} from {at:g}%"></span>'
    return (
        f'<span class="bar" title="{percent:g}% of the limit">'
        f'<span class="fill {_h(check["verdict"])}" style="width: {width:g}%"></span>{marks}</span>'
        f'<span class="pct">{percent:g}%</span>'
    )


def html_page(doc: Mapping[str, Any]) -> str:
    """report.html: one self-contained page (inline CSS, no scripts, no external resources)."""
    run_id = doc["run"]["id"]
    out = [
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
        f"<title>gpurack report: run {_h(run_id)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n",
        f"<h1>gpurack report: run {_h(run_id)} {_badge(doc['summary']['verdict'])}</h1>\n",
        f'<p class="muted">{_h(_run_line(doc))}; {_h(doc["generator"])}</p>\n',
        f"<p><strong>{_h(_summary_line(doc))}</strong></p>\n",
    ]
    if doc["nodes"]:
        out.append(
            '<table class="nodes">\n<thead><tr><th>verdict</th><th>node</th><th>pool</th><th>GPUs</th>'
            "<th>driver</th><th>fail</th><th>warn</th><th>pass</th><th>skip</th></tr></thead>\n<tbody>\n"
        )
        out.extend(
            f'<tr><td>{_badge(n["verdict"])}</td><td><a href="#node-{i}">{_h(n["host"])}</a></td>'
            f"<td>{_h(n['pool'])}</td><td>{len(n['gpus'])}</td><td>{_h(n['software']['driver'])}</td>"
            + "".join(f"<td>{n['counts'][v]}</td>" for v in ("fail", "warn", "pass", "skip"))
            + "</tr>\n"
            for i, n in enumerate(doc["nodes"])
        )
        out.append("</tbody>\n</table>\n")
    out.extend(_html_node(i, n) for i, n in enumerate(doc["nodes"]))
    out.append("</body>\n</html>\n")
    return "".join(out)


def _html_node(index: int, node: Mapping[str, Any]) -> str:
    sw = node["software"]
    labels = (
        "".join(f"<code>{_h(k)}={_h(v)}</code> " for k, v in node["labels"].items())
        if node["labels"]
        else '<span class="muted">none</span>'
    )
    out = [
        f'<section class="node {_h(node["verdict"] or "none")}" id="node-{index}">\n',
        f'<h2>{_badge(node["verdict"])} {_h(node["host"])}</h2>\n<dl class="meta">\n',
        f"<dt>pool</dt><dd>{_h(node['pool'])}</dd>\n",
        f"<dt>Kubernetes node</dt><dd>{_h(node['k8s_node_name'])}</dd>\n",
        f"<dt>source</dt><dd>{_h(node['source'])}</dd>\n",
        f"<dt>kernel</dt><dd>{_h(sw['kernel'])}</dd>\n<dt>driver</dt><dd>{_h(sw['driver'])}</dd>\n",
        f"<dt>CUDA</dt><dd>{_h(sw['cuda'])}</dd>\n",
        f"<dt>labels</dt><dd>{labels}</dd>\n</dl>\n",
    ]
    if node["gpus"]:
        out.append(
            '<table class="gpus">\n<thead><tr><th>GPU</th><th>bus id</th><th>name</th><th>serial</th>'
            "<th>UUID</th><th>VBIOS</th><th>memory MiB</th><th>PCIe now / max</th></tr></thead>\n<tbody>\n"
        )
        out.extend(
            f"<tr><td>{_h(g['index'])}</td><td><code>{_h(g['bus_id'])}</code></td><td>{_h(g['name'])}</td>"
            f"<td><code>{_h(g['serial'])}</code></td><td><code>{_h(g['uuid'])}</code></td>"
            f"<td>{_h(g['vbios'])}</td><td>{_h(g['memory_mib'])}</td><td>{_h(_pcie(g['pcie']))}</td></tr>\n"
            for g in node["gpus"]
        )
        out.append("</tbody>\n</table>\n")
    if not node["checks"]:
        out.append('<p class="muted">No check results recorded for this node.</p>\n</section>\n')
        return "".join(out)
    out.append(
        '<table class="checks">\n<thead><tr><th>verdict</th><th>check</th><th>component</th>'
        "<th>measured</th><th>expected</th><th>% of limit</th><th>remediation</th></tr></thead>\n<tbody>\n"
    )
    for c in node["checks"]:
        out.append(
            f'<tr class="{_h(c["verdict"])}"><td>{_badge(c["verdict"])}</td>'
            f'<td>{_h(c["title"] or c["id"])}<br><code class="muted">{_h(c["id"])}</code></td>'
            f"<td>{_h(c['component'])}</td><td>{_h(_value(c['measured'], c['unit']))}</td>"
            f"<td>{_h(_value(c['expected'], c['unit']))}</td><td>{_bar(c)}</td>"
            f"<td>{_h(c['remediation'])}</td></tr>\n"
            f'<tr class="{_h(c["verdict"])}-evidence"><td></td><td class="evidence" colspan="6">'
            f"{_evidence(c)}</td></tr>\n"
        )
    out.append("</tbody>\n</table>\n</section>\n")
    return "".join(out)


def _evidence(check: Mapping[str, Any]) -> str:
    evidence = check["evidence"]
    parts = [f"<details><summary>{_h(check['reason'] or 'evidence')}</summary>\n"]
    parts.append(f"<p><strong>source</strong>: {_h(evidence['source'] or 'not recorded')}</p>\n")
    if check["limit_source"]:
        parts.append(f"<p><strong>limit</strong>: {_h(check['limit_source'])}</p>\n")
    if evidence["lines"]:
        parts.append("<pre>" + "\n".join(_h(line) for line in evidence["lines"]) + "</pre>\n")
    parts.append("</details>")
    return "".join(parts)


# -- command --------------------------------------------------------------------------------


def document(doc: Mapping[str, Any], fmt: str) -> str:
    """One document in `fmt` (md, html or json)."""
    if fmt == "md":
        return markdown(doc)
    if fmt == "html":
        return html_page(doc)
    return json.dumps(doc, indent=2, default=str) + "\n"


def write(doc: Mapping[str, Any], folder: Path, formats: Sequence[str]) -> list[Path]:
    """Write the documents of `formats` into `folder`; return their paths.

    Raises:
        UsageError: the folder or a file cannot be written.
    """
    paths = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for fmt in formats:
            path = folder / FILES[fmt]
            path.write_text(document(doc, fmt), encoding="utf-8")
            paths.append(path)
    except OSError as exc:
        raise UsageError(f"cannot write the report into {folder}: {exc.strerror or exc}") from exc
    return paths


def _run_arg(text: str) -> int | None:
    if text == "latest":
        return None
    if text.isdigit() and int(text) > 0:
        return int(text)
    raise argparse.ArgumentTypeError(f"RUN must be a run id or 'latest', got {text!r}")


def _formats_arg(text: str) -> tuple[str, ...]:
    formats = tuple(dict.fromkeys(f.strip() for f in text.split(",") if f.strip()))
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise argparse.ArgumentTypeError(
            f"unknown format {', '.join(unknown) or repr(text)} (choose from {', '.join(FORMATS)})"
        )
    return formats


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `gpurack report` to the CLI."""
    parser = subparsers.add_parser("report", help="write a run's report: Markdown, HTML and JSON")
    parser.add_argument("run", type=_run_arg, metavar="RUN", help="run id from the inventory, or 'latest'")
    parser.add_argument(
        "--db", metavar="URL", help="inventory database (default: $GPURACK_DB, else the SQLite file)"
    )
    parser.add_argument(
        "--output", type=Path, metavar="DIR", help="folder for the files (default: ./gpurack-report-run-N)"
    )
    parser.add_argument(
        "--format",
        dest="formats",
        type=_formats_arg,
        default=FORMATS,
        metavar="md,html,json",
        help="which documents to write (default: all three)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run `gpurack report RUN`; exit 0 once the files are written, whatever the verdicts."""
    with open_store(args.db) as store:
        view = store.run(args.run)
    doc = build(view)
    folder = args.output if args.output is not None else Path(f"gpurack-report-run-{view.run_id}")
    for path in write(doc, folder, args.formats):
        sys.stdout.write(f"{path}\n")
    return ExitCode.OK
