"""Turn a finished playbook run's events into inventory records, one per host, and store them.

The facts modules return `ansible_facts.gpurack_*`, the preflight role sets `preflight_report`
and the node_labels role's `k8s_node_metadata` module returns the Kubernetes `node` it set;
all travel in ansible-runner's job events, so the driver records what each host showed
without a second connection to it. playbooks/patch.yml sets `gpurack_patch` on each host it
worked on (docs/inventory-db.md has its keys): an outcome, not hardware, so it is kept apart
from the facts and recorded as the run's patch outcome of that host.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels import LabelError, node_labels
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import VERDICTS

from gpurack import coerce
from gpurack.config import DEFAULT_POOL
from gpurack.errors import UsageError
from gpurack.inventory import NodeRecord, PatchRecord, RunRecord, open_store, patch_outcome

FACT_PREFIX = "gpurack_"
REPORT_FACT = "preflight_report"
PATCH_FACT = "gpurack_patch"
# The module whose `node` return value names the host's Kubernetes Node (roles/node_labels).
NODE_METADATA_ACTIONS = frozenset({"gpurack.bootstrap.k8s_node_metadata", "k8s_node_metadata"})


@dataclass
class _Seen:
    """What the events of one run showed, by host."""

    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    reports: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    node_names: dict[str, str] = field(default_factory=dict)
    patches: dict[str, Any] = field(default_factory=dict)  # the last gpurack_patch value set


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
        if key == PATCH_FACT:
            # The play may set it more than once on a host (a retry, its `always:`): the last counts.
            seen.patches[host] = value
        elif key.startswith(FACT_PREFIX):
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


def patch_outcomes(artifact_dir: Path) -> list[PatchRecord]:
    """What a patch run did to each host that set `gpurack_patch`, by host name; none for other runs."""
    return _patches(_collect(artifact_dir))


def _patches(seen: _Seen) -> list[PatchRecord]:
    return [patch_record(host, seen.patches[host]) for host in sorted(seen.patches)]


def patch_record(host: str, fact: Any) -> PatchRecord:
    """The `gpurack_patch` fact of `host` as a record: a field that cannot be read is None.

    Numbers and booleans may arrive as text ("12.3", "True"): Ansible templates them so
    on some paths. A fact that is no mapping (nor JSON text of one) gives an outcome of None.
    """
    data = coerce.mapping(_json_text(fact))
    return PatchRecord(
        host=host,
        outcome=patch_outcome(_word(data.get("outcome"))),
        node=_text(data.get("node")),
        reason=_text(data.get("reason")),
        drain_s=_seconds(data.get("drain_s")),
        update_s=_seconds(data.get("update_s")),
        reboot_s=_seconds(data.get("reboot_s")),
        validation_s=_seconds(data.get("validation_s")),
        kernel_before=_text(data.get("kernel_before")),
        kernel_after=_text(data.get("kernel_after")),
        driver_before=_text(data.get("driver_before")),
        driver_after=_text(data.get("driver_after")),
        rebooted=coerce.flag(data.get("rebooted")),
        validation=_verdict(data.get("validation")),
        maintenance_run=_text(data.get("run")),
    )


def _json_text(value: Any) -> Any:
    """A mapping passed through `to_json` arrives as text: read it back; anything else as is."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _text(value: Any) -> str | None:
    """Text as reported, stripped; a number as its text; None for empty, a list, a mapping, a bool."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    try:
        shown = str(value)
    except ValueError:  # an integer beyond Python's 4,300 digits
        return None
    # PostgreSQL refuses NUL in text.
    return shown.replace("\x00", "").strip() or None


def _word(value: Any) -> str | None:
    shown = _text(value)
    return None if shown is None else shown.lower()


def _seconds(value: Any) -> float | None:
    """A duration in seconds, from a number or its text; None when none, negative or not finite."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    try:
        seconds = float(value.strip() if isinstance(value, str) else value)
    except (ValueError, OverflowError):
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _verdict(value: Any) -> str | None:
    """The validation gate's verdict; None when it did not run ("") or is no verdict."""
    word = _word(value)
    return word if word in VERDICTS else None


def record_run(artifact_dir: Path, playbook: str, status: str, db: str | None) -> int | None:
    """Keep what each host of a finished run showed, and what a patch run did to each host, in the
    inventory; None when no host returned facts or a patch outcome.

    Known hosts the run only labelled (no facts returned) get their Kubernetes node name too.
    """
    seen = _collect(artifact_dir)
    nodes = _records(seen)
    patches = _patches(seen)
    recorded = {n.host for n in nodes}
    names = {h: n for h, n in seen.node_names.items() if h not in recorded}
    if not nodes and not patches and not names:
        return None
    with open_store(db) as store:
        run_id = None
        if nodes or patches:
            run = RunRecord(kind="run", source="ansible", playbook=playbook, status=status)
            run_id = store.record(run, nodes, patches)
        for host, name in names.items():
            try:
                store.set_k8s_node_name(host, name)
            except UsageError:
                continue  # a host never recorded: nothing to attach the name to
        return run_id
