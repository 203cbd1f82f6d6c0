"""The inventory's domain API: record runs, read nodes back, say what drifted.

The CLI's `run`/`validate` commands call `open_store(url).record(RunRecord(...), nodes)`;
`gpurack inventory` reads it back. Everything crossing this boundary is a frozen record of
`gpurack.records`; the database and its rows stay in `gpurack.db`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Literal

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import VERDICTS, node_verdict

from gpurack import db, drift, hoststate
from gpurack.drift import Drift
from gpurack.errors import UsageError
from gpurack.hoststate import HostState
from gpurack.inventory.export import export_csv, export_json
from gpurack.records import (
    AcceptanceRecord,
    AcceptanceView,
    Comparison,
    HistoryEntry,
    LinkRecord,
    NodeRecord,
    NodeSummary,
    PatchRecord,
    RunRecord,
    RunView,
    SnapshotRow,
    SnapshotView,
)

ExportFormat = Literal["json", "csv"]
Pair = db.Pair  # (older run, newer run) to compare; None where there is none


def snapshot_verdict(results: Sequence[Mapping[str, Any]]) -> str | None:
    """The node verdict of `results` (the rule of module_utils/results/model.py); None without results."""
    judged = [r for r in results if str(r.get("verdict")) in VERDICTS]
    return node_verdict(judged).value if judged else None


class Store:
    """The inventory: runs, nodes and their snapshots. Use `open_store()` to get one."""

    def __init__(self, database: db.Database) -> None:
        self.database = database
        self._repo = db.Repository(database)

    @property
    def url(self) -> str:
        """The database URL with its password masked."""
        return self._repo.url

    def close(self) -> None:
        self._repo.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------------

    def record(self, run: RunRecord, nodes: Sequence[NodeRecord], patches: Sequence[PatchRecord] = ()) -> int:
        """Store one run, a snapshot of each node it saw and what it did to each host it patched;
        return the run id. A patched host not yet known becomes a node.

        Raises:
            UsageError: the same host appears twice in `nodes`, or twice in `patches`.
        """
        _once([n.host for n in nodes], "host listed twice")
        _once([p.host for p in patches], "host patched twice")
        rows = [
            SnapshotRow(
                n, hoststate.state_from_facts(n.facts, n.results, n.labels), snapshot_verdict(n.results)
            )
            for n in nodes
        ]
        return self._repo.write_run(run, rows, patches)

    def record_links(self, run: RunRecord, links: Mapping[str, Sequence[LinkRecord]]) -> int:
        """Store one fabric run: where each NIC of each host was seen cabled; return the run id.

        Unknown hosts become nodes; no snapshot is written (a fabric run reads no hardware).

        Raises:
            UsageError: `run` is not of kind "fabric", or a host lists the same NIC twice.
        """
        if run.kind != "fabric":
            raise UsageError(f"cannot record links in a {run.kind!r} run: links belong to a fabric run")
        for host, nics in links.items():
            names = [link.nic for link in nics]
            if len(set(names)) != len(names):
                twice = sorted({n for n in names if names.count(n) > 1})
                raise UsageError(f"cannot record fabric run: {host} lists NIC twice: {', '.join(twice)}")
        return self._repo.write_links(run, links)

    def record_acceptance(self, run: RunRecord, acceptance: AcceptanceRecord) -> int:
        """Store one acceptance run and its rows; return the run id.

        Raises:
            UsageError: `run` is not of kind "accept", or the run ends before it starts.
        """
        if run.kind != "accept":
            raise UsageError(f"cannot record an acceptance run in a {run.kind!r} run")
        if acceptance.finished < acceptance.started:
            raise UsageError(f"acceptance run {acceptance.name} ends before it starts")
        return self._repo.write_acceptance(run, acceptance)

    def record_run_results(self, run: RunRecord, results: Sequence[Mapping[str, Any]]) -> int:
        """Store one conformance run and its results (the one result shape); return the run id.

        Raises:
            UsageError: `run` is not of kind "conformance".
        """
        if run.kind != "conformance":
            raise UsageError(f"cannot record cluster results in a {run.kind!r} run")
        return self._repo.write_run_results(run, results)

    def acceptance_runs(
        self, since: datetime | None = None, until: datetime | None = None
    ) -> list[AcceptanceView]:
        """The acceptance runs whose GPUs were held in [since, until), oldest first."""
        return self._repo.acceptance_runs(since, until)

    def first_recorded(self) -> datetime | None:
        """When the inventory started observing: the earliest recorded start, None before any record."""
        return self._repo.first_recorded()

    def set_k8s_node_name(self, host: str, name: str) -> None:
        """Remember the Kubernetes node name of `host` (once it joined a cluster).

        Raises:
            UsageError: `host` is not in the inventory.
        """
        self._repo.set_k8s_node_name(host, name)

    # -- reading ---------------------------------------------------------------------------

    def hosts(self) -> list[str]:
        return self._repo.hosts()

    def list_nodes(self) -> list[NodeSummary]:
        """Every node with its latest snapshot's verdict, driver and GPUs, by host name."""
        return self._repo.list_nodes()

    def history(self, host: str) -> list[HistoryEntry]:
        """Every snapshot of `host`, oldest first.

        Raises:
            UsageError: `host` is not in the inventory.
        """
        return self._repo.history(host)

    def _runs(self, host: str) -> dict[int, int]:
        """Run id -> snapshot id of `host`; UsageError when unknown or without snapshots."""
        by_run = self._repo.snapshot_runs(host)
        if not by_run:
            raise UsageError(f"host {host!r} has no snapshots")
        return by_run

    def snapshot(self, host: str, run_id: int | None = None) -> SnapshotView:
        """The snapshot of `host` in run `run_id` (default: its latest).

        Raises:
            UsageError: unknown host, or the host has no snapshot in that run.
        """
        by_run = self._runs(host)
        wanted = list(by_run)[-1] if run_id is None else run_id
        if wanted not in by_run:
            raise UsageError(
                f"host {host!r} has no snapshot in run {wanted} (see gpurack inventory history {host})"
            )
        return self._repo.snapshot(by_run[wanted])

    def run(self, run_id: int | None = None) -> RunView:
        """Run `run_id` (default: the latest but fabric runs) with the snapshot of each host it saw.

        Raises:
            UsageError: no such run, or no run recorded yet.
        """
        return self._repo.run(run_id)

    def latest_snapshots(self, pool: str | None = None) -> list[SnapshotView]:
        """The latest snapshot of every node, or of the nodes of `pool`, by host name."""
        return self._repo.latest_snapshots(pool)

    def compare(self, host: str, from_run: int | None = None, to_run: int | None = None) -> Comparison:
        """What changed on `host` between two runs (default: its last two snapshots and fabric runs).

        Hardware is compared between two runs that both hold a snapshot of `host`; cabling
        between its two latest fabric runs, or with `from_run`/`to_run` given, the latest
        fabric run at or before each.

        Raises:
            UsageError: unknown host, a host with neither snapshots nor fabric runs, or a given
                run in which the host has neither.
        """
        by_run = self._repo.snapshot_runs(host)
        fabric = self._repo.fabric_runs(host)
        if not by_run and not fabric:
            raise UsageError(f"host {host!r} has no snapshots")
        known = sorted({*by_run, *fabric})
        for given in (from_run, to_run):
            if given is not None and given not in known:
                raise UsageError(
                    f"host {host!r} has no snapshot in run {given} (runs: {', '.join(map(str, known))})"
                )
        before, after = _snapshot_pair(list(by_run), from_run, to_run)
        states: dict[int, HostState] = {}
        if before is not None and after is not None:
            by_snapshot = self._repo.states([by_run[before], by_run[after]])
            states = {run: by_snapshot[by_run[run]] for run in (before, after)}
        link_from, link_to = _fabric_pair(fabric, from_run, to_run)
        links: Mapping[int, Sequence[LinkRecord]] = {}
        if link_from is not None and link_to is not None:
            links = self._repo.links(host, [link_from, link_to])
        return _comparison(host, (before, after), states, (link_from, link_to), links)

    def compare_all(self) -> list[Comparison]:
        """`compare(host)` of every host with snapshots or fabric runs, by host name, in one read.

        Each host's default pairs (its last two snapshots and last two fabric runs); a node
        with neither (a patched host never seen) is left out, where `compare()` refuses it.
        """
        chosen = self._repo.chosen_runs(
            lambda runs, fabric: (_snapshot_pair(runs, None, None), _fabric_pair(fabric, None, None))
        )
        return [_comparison(c.host, c.snapshots, c.states, c.fabric, c.links) for c in chosen]

    def diff(self, host: str, from_run: int | None = None, to_run: int | None = None) -> list[Drift]:
        """The drift items of `compare()`."""
        return list(self.compare(host, from_run, to_run).drifts)

    # -- export ----------------------------------------------------------------------------

    def export(self, fmt: ExportFormat) -> str:
        """Every node with its latest snapshot, as JSON (nested) or CSV (one row per node)."""
        rows = self._repo.export_rows()
        return export_json(rows) if fmt == "json" else export_csv(rows)


def _once(hosts: Sequence[str], problem: str) -> None:
    if len(set(hosts)) != len(hosts):
        twice = sorted({h for h in hosts if hosts.count(h) > 1})
        raise UsageError(f"cannot record run: {problem}: {', '.join(twice)}")


def _comparison(
    host: str,
    snapshots: Pair,
    states: Mapping[int, HostState],
    fabric: Pair,
    links: Mapping[int, Sequence[LinkRecord]],
) -> Comparison:
    """The drift of `host` between the chosen runs, from the states and links of each, by run id."""
    before, after = snapshots
    drifts: list[Drift] = []
    if before is not None and after is not None:
        drifts = drift.diff(states[before], states[after])
    link_from, link_to = fabric
    if link_from is not None and link_to is not None:
        drifts.extend(drift.diff_links(links[link_from], links[link_to]))
    return Comparison(host, before, after, tuple(drifts), link_from, link_to)


def _snapshot_pair(runs: list[int], from_run: int | None, to_run: int | None) -> Pair:
    """The snapshot runs to compare: a given run without a snapshot (a fabric run) compares nothing."""
    after = to_run if to_run is not None else (runs[-1] if runs else None)
    if after is None or after not in runs:
        return None, None
    if from_run is None:
        earlier = [r for r in runs if r < after]
        return (earlier[-1] if earlier else None), after
    return (from_run if from_run in runs else None), after


def _fabric_pair(fabric: list[int], from_run: int | None, to_run: int | None) -> Pair:
    """The fabric runs to compare: the last two, or the latest at or before each given run."""
    if from_run is None and to_run is None:
        return (fabric[-2] if len(fabric) > 1 else None), (fabric[-1] if fabric else None)
    after = _at_or_before(fabric, to_run) if to_run is not None else (fabric[-1] if fabric else None)
    if after is None:
        return None, None
    if from_run is None:
        return _at_or_before(fabric, after - 1), after
    return _at_or_before(fabric, from_run), after


def _at_or_before(runs: list[int], run_id: int) -> int | None:
    """The latest of `runs` (oldest first) at or before `run_id`."""
    earlier = [r for r in runs if r <= run_id]
    return earlier[-1] if earlier else None


def open_store(url: str | None = None, *, create: bool = True) -> Store:
    """Open the inventory at `url` (else `$GPURACK_DB`, else the default SQLite file).

    The read-only verbs pass `create=False`: a database that is not there is then a usage
    error, and nothing is created.

    Raises:
        UsageError: (64) unparseable or unsupported URL; without `create`, no inventory there.
        NotAssessedError: (2) unreachable server, unopenable file, busy database.
    """
    return Store(db.connect(url, create=create))


def check_database(url: str | None = None) -> str:
    """The masked URL of the inventory `open_store(url)` would open, checked without opening it.

    Raises:
        UsageError: (64) unparseable or unsupported URL, or a bad `$GPURACK_DB_TIMEOUT`.
    """
    return db.check_settings(url)
