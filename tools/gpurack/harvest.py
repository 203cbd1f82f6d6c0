"""Turn a finished playbook run's events into inventory records, one per host.

The facts modules return `ansible_facts.gpurack_*` and the preflight role sets
`preflight_report`; both travel in ansible-runner's job events, so the driver records what
each host showed without a second connection to it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils._labels import LabelError, node_labels

from gpurack.config import DEFAULT_POOL
from gpurack.inventory import NodeRecord

FACT_PREFIX = "gpurack_"
REPORT_FACT = "preflight_report"


def job_events(artifact_dir: Path) -> Iterator[dict[str, Any]]:
    """Every job event ansible-runner wrote under `artifact_dir`, in order."""
    for folder in sorted(artifact_dir.glob("artifacts/*/job_events")):
        paths = sorted(folder.glob("*.json"), key=lambda p: int(p.name.split("-", 1)[0]))
        for path in paths:
            try:
                yield json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # a partly written event of an interrupted run carries nothing to keep


def harvest(artifact_dir: Path) -> list[NodeRecord]:
    """One NodeRecord per host that returned gpurack facts or a preflight report."""
    facts: dict[str, dict[str, Any]] = {}
    reports: dict[str, Mapping[str, Any]] = {}
    for event in job_events(artifact_dir):
        if event.get("event") != "runner_on_ok":
            continue
        data = event.get("event_data") or {}
        host = data.get("host")
        returned = (data.get("res") or {}).get("ansible_facts") or {}
        if not host or not isinstance(returned, Mapping):
            continue
        for key, value in returned.items():
            if key.startswith(FACT_PREFIX):
                facts.setdefault(host, {})[key] = value
            elif key == REPORT_FACT and isinstance(value, Mapping):
                reports[host] = value
    return [_record(host, facts.get(host, {}), reports.get(host, {})) for host in sorted({*facts, *reports})]


def _record(host: str, facts: dict[str, Any], report: Mapping[str, Any]) -> NodeRecord:
    settings = report.get("pool_settings")
    pool = {**DEFAULT_POOL, **(settings if isinstance(settings, Mapping) else {})}
    return NodeRecord(
        host=host,
        pool=report.get("pool") or None,
        source="ansible",
        facts=facts,
        labels=_labels(facts, pool),
        results=list(report.get("results") or []),
    )


def _labels(facts: Mapping[str, Any], pool: Mapping[str, Any]) -> dict[str, str]:
    """Labels as the join will set them; none when the pool settings are not valid labels."""
    if "gpurack_gpu" not in facts:
        return {}
    try:
        return node_labels(dict(facts), dict(pool))
    except LabelError:
        return {}
