"""What the inventory holds, as plain frozen records: written by runs, read back by `gpurack inventory`.

Both sides of the database boundary use these: `gpurack.inventory` (the domain API) builds
and reads them, `gpurack.db` turns them into rows and back. No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost import Outcome

from gpurack.drift import Drift
from gpurack.hoststate import HostState

RunKind = Literal["run", "validate", "capture", "fabric", "accept", "conformance"]
# Runs that hold no node snapshots (a report of "the latest run" skips them).
RUNS_WITHOUT_SNAPSHOTS: tuple[RunKind, ...] = ("fabric", "accept", "conformance")
# What playbooks/patch.yml did to a node (its `gpurack_patch` fact): updated and back in
# service, nothing to do, cordoned and kept out by gpurack, or refused by the pre-check.
PatchOutcome = Literal["patched", "unchanged", "held", "refused"]
PATCH_OUTCOMES: tuple[PatchOutcome, ...] = ("patched", "unchanged", "held", "refused")


def patch_outcome(value: object) -> PatchOutcome | None:
    """`value` if it is one of PATCH_OUTCOMES, else None."""
    return next((outcome for outcome in PATCH_OUTCOMES if outcome == value), None)


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One gpurack invocation that looked at nodes."""

    kind: RunKind
    source: str = "ansible"
    playbook: str | None = None
    status: str = "successful"
    started: datetime | None = None  # default: when recorded
    finished: datetime | None = None


@dataclass(frozen=True, slots=True)
class NodeRecord:
    """What one run saw on one node: facts per docs/facts.md, labels and check results."""

    host: str
    pool: str | None
    source: str  # "ansible" | "local" | "capture:<path>"
    facts: Mapping[str, Any]
    labels: Mapping[str, Any] = field(default_factory=dict)
    results: Sequence[Mapping[str, Any]] = ()
    k8s_node_name: str | None = None


@dataclass(frozen=True, slots=True)
class LinkRecord:
    """Where a fabric run saw one server NIC cabled: `switch`/`port` None when on no switch port.

    `neighbor` is what the switch's LLDP shows on that port (free text, None when nothing).
    """

    nic: str
    switch: str | None
    port: str | None
    neighbor: str | None


@dataclass(frozen=True, slots=True)
class AcceptanceRecord:
    """One acceptance run (playbooks/accept.yml): the job, what its GPUs were held for and did,
    and its seven rows (result dicts, docs/checks.md's shape).

    `started`/`finished`: the GPUs' allocation (Kueue's admission to the job's end);
    `outcome`: accepted (the job completed and no row failed), failed, or other (never ran).
    """

    name: str
    team: str
    queue: str
    pool: str
    pods: int
    gpus: int
    started: datetime
    finished: datetime
    outcome: Outcome
    units: float
    verdict: str
    results: Sequence[Mapping[str, Any]]
    queue_wait_s: float | None = None
    cost_total: float | None = None
    cost_per_unit: float | None = None
    currency: str = ""


@dataclass(frozen=True, slots=True)
class AcceptanceView:
    """A stored acceptance run, with the gpurack run it belongs to."""

    run_id: int
    record: AcceptanceRecord


@dataclass(frozen=True, slots=True)
class PatchRecord:
    """What one patch run did to one host: the last `gpurack_patch` fact the host set.

    `outcome` None: the fact named none of PATCH_OUTCOMES. Any other field None: not
    reported or not readable (a step that did not run has no duration; `validation` is a
    verdict, None when the gate did not run). `maintenance_run` is the run id of the
    gpurack.io/maintenance annotation.
    """

    host: str
    outcome: PatchOutcome | None
    node: str | None = None
    reason: str | None = None
    drain_s: float | None = None
    update_s: float | None = None
    reboot_s: float | None = None
    validation_s: float | None = None
    kernel_before: str | None = None
    kernel_after: str | None = None
    driver_before: str | None = None
    driver_after: str | None = None
    rebooted: bool | None = None
    validation: str | None = None
    maintenance_run: str | None = None


@dataclass(frozen=True, slots=True)
class SnapshotRow:
    """A NodeRecord ready to store: its comparable state and its verdict (None without results)."""

    node: NodeRecord
    state: HostState
    verdict: str | None


@dataclass(frozen=True, slots=True)
class NodeSummary:
    host: str
    pool: str | None
    k8s_node_name: str | None
    first_seen: datetime
    last_seen: datetime
    runs: int
    last_run: int | None
    verdict: str | None
    driver: str | None
    gpus: int
    gpu_model: str | None


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    run_id: int
    kind: str
    started: datetime
    finished: datetime | None
    status: str
    playbook: str | None
    source: str
    verdict: str | None
    kernel: str | None
    driver: str | None
    cuda: str | None
    gpus: int


@dataclass(frozen=True, slots=True)
class SnapshotView:
    """One stored snapshot of one host, with the run it belongs to."""

    host: str
    pool: str | None
    k8s_node_name: str | None
    run_id: int
    run_kind: str
    started: datetime
    source: str
    verdict: str | None
    facts: Mapping[str, Any]
    labels: Mapping[str, Any]
    results: tuple[Mapping[str, Any], ...]
    state: HostState


@dataclass(frozen=True, slots=True)
class RunView:
    """One stored run with the snapshot of every host it saw, by host name (and, for an accept
    run, its acceptance record; for a patch run, what it did to each host, by host name)."""

    run_id: int
    kind: str
    source: str
    playbook: str | None
    status: str
    started: datetime
    finished: datetime | None
    nodes: tuple[SnapshotView, ...]
    acceptance: AcceptanceView | None = None  # an accept run's job, outcome and seven rows
    patches: tuple[PatchRecord, ...] = ()
    results: tuple[Mapping[str, Any], ...] = ()  # a conformance run's results, about the cluster


@dataclass(frozen=True, slots=True)
class Comparison:
    """The drift of one host: hardware between two snapshots, cabling between two fabric runs.

    `from_run`/`to_run` are the snapshot runs compared (`from_run` None with one snapshot,
    both None without any); `from_fabric_run`/`to_fabric_run` likewise for the fabric runs.
    """

    host: str
    from_run: int | None
    to_run: int | None
    drifts: tuple[Drift, ...]
    from_fabric_run: int | None = None
    to_fabric_run: int | None = None


@dataclass(frozen=True, slots=True)
class NodeHead:
    """A node's own columns: who it is and when it was seen."""

    host: str
    pool: str | None
    k8s_node_name: str | None
    first_seen: datetime
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class LatestSnapshot:
    """A node's latest snapshot, as `gpurack inventory export` lists it."""

    run_id: int
    run_kind: str
    started: datetime
    source: str
    verdict: str | None
    state: HostState


@dataclass(frozen=True, slots=True)
class ExportRow:
    """One node of an export: its columns and its latest snapshot (None before any)."""

    node: NodeHead
    latest: LatestSnapshot | None
