"""Turn a finished playbook run's events into inventory records, one per host, and store them.

The facts modules return `ansible_facts.gpurack_*`, the preflight role sets `preflight_report`
and the node_labels role's `k8s_node_metadata` module returns the Kubernetes `node` it set;
all travel in ansible-runner's job events, so the driver records what each host showed
without a second connection to it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils._labels import LabelError, node_labels

from gpurack.config import DEFAULT_POOL
from gpurack.errors import UsageError
from gpurack.inventory import NodeRecord, RunRecord, open_store

FACT_PREFIX = "gpurack_"
REPORT_FACT = "preflight_report"
# The module whose `node` return value names the host's Kubernetes Node (roles/node_labels).
NODE_METADATA_ACTIONS = frozenset({"gpurack.bootstrap.k8s_node_metadata", "k8s_node_metadata"})


@dataclass
class _Seen:
    """What the events of one run showed, by host."""

    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    reports: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    node_names: dict[str, str] = field(default_factory=dict)


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
    """One NodeRecord per host that returned gpurack facts or a preflight report.

    A host whose Kubernetes Node the run labelled carries that Node's name.
    """
    return _records(_collect(artifact_dir))


def _records(seen: _Seen) -> list[NodeRecord]:
    hosts = sorted({*seen.facts, *seen.reports})
    return [
        _record(host, seen.facts.get(host, {}), seen.reports.get(host, {}), seen.node_names.get(host))
        for host in hosts
    ]


def _collect(artifact_dir: Path) -> _Seen:
    seen = _Seen()
    for event in job_events(artifact_dir):
        if event.get("event") != "runner_on_ok":
            continue
        data = event.get("event_data") or {}
        host = data.get("host")
        res = data.get("res") or {}
        if not host or not isinstance(res, Mapping):
            continue
        name = _node_name(data, res)
        if name:
            seen.node_names[host] = name
        returned = res.get("ansible_facts") or {}
        if isinstance(returned, Mapping):
            _keep_facts(seen, host, returned)
    return seen


def _node_name(data: Mapping[str, Any], res: Mapping[str, Any]) -> str | None:
    """The `node` a k8s_node_metadata task returned (delegated to the controller, for this host)."""
    action = data.get("resolved_action") or data.get("task_action")
    node = res.get("node")
    return node if action in NODE_METADATA_ACTIONS and isinstance(node, str) and node else None


def _keep_facts(seen: _Seen, host: str, returned: Mapping[str, Any]) -> None:
    for key, value in returned.items():
        if key.startswith(FACT_PREFIX):
            seen.facts.setdefault(host, {})[key] = value
        elif key == REPORT_FACT and isinstance(value, Mapping):
            seen.reports[host] = value


def _record(
    host: str, facts: dict[str, Any], report: Mapping[str, Any], k8s_node_name: str | None
) -> NodeRecord:
    settings = report.get("pool_settings")
    pool = {**DEFAULT_POOL, **(settings if isinstance(settings, Mapping) else {})}
    return NodeRecord(
        host=host,
        pool=report.get("pool") or None,
        source="ansible",
        facts=facts,
        labels=_labels(facts, pool),
        results=list(report.get("results") or []),
        k8s_node_name=k8s_node_name,
    )


def _labels(facts: Mapping[str, Any], pool: Mapping[str, Any]) -> dict[str, str]:
    """Labels as the join will set them; none when the pool settings are not valid labels."""
    if "gpurack_gpu" not in facts:
        return {}
    try:
        return node_labels(dict(facts), dict(pool))
    except LabelError:
        return {}


def record_run(artifact_dir: Path, playbook: str, status: str, db: str | None) -> int | None:
    """Keep what each host of a finished run showed in the inventory; None when no host returned facts.

    Known hosts the run only labelled (no facts returned) get their Kubernetes node name too.
    """
    seen = _collect(artifact_dir)
    nodes = _records(seen)
    recorded = {n.host for n in nodes}
    names = {h: n for h, n in seen.node_names.items() if h not in recorded}
    if not nodes and not names:
        return None
    with open_store(db) as store:
        for host, name in names.items():
            try:
                store.set_k8s_node_name(host, name)
            except UsageError:
                continue  # a host never recorded: nothing to attach the name to
        if not nodes:
            return None
        run = RunRecord(kind="run", source="ansible", playbook=playbook, status=status)
        return store.record(run, nodes)
