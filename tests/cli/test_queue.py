"""`gpurack queue`: Kueue objects to records, the one-line reasons, the tables, JSON and exit codes."""

from __future__ import annotations

import io
import json
import urllib.error
from pathlib import Path
from typing import Any

import kueue_objects as k
import pytest
from gpurack import prometheus, queue
from gpurack.cli import main
from gpurack.commands import queue as queue_command
from gpurack.errors import ExitCode, NotAssessedError, UsageError
from gpurack.quantity import human, parse_quantity
from gpurack.queue import PendingMetric, QueueStatus, queue_status
from gpurack.queue.fetch import KueueObjects

GIB = 2**30


def _status(metrics: list[PendingMetric] | None = None) -> QueueStatus:
    return queue_status(k.cluster_queues(), k.local_queues(), k.workloads(), metrics)


def _pending(status: QueueStatus, name: str) -> queue.PendingWorkload:
    return next(w for w in status.pending if w.name == f"job-{name}-3f2a1")


# ---------------------------------------------------------------------------------------------
# quantities


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8", 8.0),
        ("500m", 0.5),
        ("512Gi", 512 * GIB),
        ("32Gi", 32 * GIB),
        ("1e3", 1000.0),
        ("1.5k", 1500.0),
        ("100M", 1e8),
        (4, 4.0),
        ("lots", None),
        (None, None),
        (True, None),
    ],
)
def test_parse_quantity_reads_kubernetes_suffixes(text: object, expected: float | None) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    ("resource", "value", "expected"),
    [
        ("nvidia.com/gpu", 8.0, "8"),
        ("nvidia.com/mig-1g.10gb", 2.0, "2"),
        ("memory", 512 * GIB, "512 GiB"),
        ("memory", 1.5 * GIB, "1.5 GiB"),
        ("cpu", 0.5, "0.5"),
        ("cpu", 64.0, "64"),
        ("cpu", None, "-"),
    ],
)
def test_human_shows_gpus_whole_memory_in_gib(resource: str, value: float | None, expected: str) -> None:
    assert human(resource, value) == expected


# ---------------------------------------------------------------------------------------------
# model


def test_cluster_queue_usage_against_nominal_quota_per_flavor_and_resource() -> None:
    alpha = _status().cluster_queues[0]
    assert (alpha.name, alpha.cohort, alpha.pending, alpha.admitted) == ("alpha", "site", 3, 1)
    assert alpha.active is not None and alpha.active.status == "True"
    uses = {(u.flavor, u.resource): u for u in alpha.resources}
    gpu = uses[("lab-h200x1", "nvidia.com/gpu")]
    assert (gpu.nominal, gpu.used, gpu.reserved, gpu.borrowed) == (1.0, 1.0, 1.0, 0.0)
    assert uses[("lab-h200x1", "memory")].used == 16 * GIB
    h100 = uses[("lab-hgx-h100x8-ib", "nvidia.com/gpu")]
    assert (h100.nominal, h100.borrowing_limit, h100.lending_limit, h100.used) == (4.0, 4.0, 0.0, 0.0)
    # Quota order is the spec's: the resource groups' flavors, then their resources.
    assert [(u.flavor, u.resource) for u in alpha.resources][:3] == [
        ("lab-h200x1", "nvidia.com/gpu"),
        ("lab-h200x1", "cpu"),
        ("lab-h200x1", "memory"),
    ]


def test_cluster_queue_usage_without_quota_is_kept_with_no_nominal() -> None:
    cq = k.cluster_queue("gamma", [], [k._usage("lab-h200x1", "1", "1", "1Gi")], pending=0)
    (status,) = queue_status([cq], [], []).cluster_queues
    gpu = next(u for u in status.resources if u.resource == "nvidia.com/gpu")
    assert (gpu.nominal, gpu.used) == (None, 1.0)


def test_local_queues_name_their_cluster_queue() -> None:
    assert [(q.namespace, q.name, q.cluster_queue, q.pending) for q in _status().local_queues] == [
        ("alpha", "alpha", "alpha", 3),
        ("beta", "beta", "beta", 2),
    ]


def test_pending_lists_every_waiting_workload_not_the_admitted_or_finished() -> None:
    names = [(w.cluster_queue, w.name) for w in _status().pending]
    # By cluster queue, then priority (highest first), then age.
    assert names == [
        ("alpha", "job-big-3f2a1"),
        ("alpha", "job-train-2-3f2a1"),
        ("alpha", "job-fresh-3f2a1"),
        ("beta", "job-mpi-3f2a1"),
        ("beta", "job-low-3f2a1"),
    ]


def test_pending_unused_quota_names_flavor_resource_and_shortfall() -> None:
    wl = _pending(_status(), "train-2")
    assert wl.waiting_on == queue.Condition("QuotaReserved", "False", "Pending", k.UNUSED_GPU)
    (blocker,) = wl.blockers
    assert (blocker.pod_set, blocker.flavor, blocker.resource, blocker.shortfall) == (
        "main",
        "lab-h200x1",
        "nvidia.com/gpu",
        1.0,
    )
    assert (blocker.kind, blocker.nominal, blocker.used) == ("unused", 1.0, 1.0)
    assert wl.reasons == ("nvidia.com/gpu in flavor lab-h200x1: 1 more needed (quota 1, in use 1)",)
    assert (wl.local_queue, wl.priority_class, wl.priority, wl.owner) == (
        "alpha",
        "training",
        100,
        "Job/train-2",
    )


def test_pending_over_capacity_says_the_queue_can_never_get_it() -> None:
    (blocker,) = _pending(_status(), "big").blockers
    assert (blocker.kind, blocker.flavor, blocker.shortfall) == ("capacity", "lab-hgx-h100x8-ib", 4.0)
    assert _pending(_status(), "big").reasons == (
        "nvidia.com/gpu in flavor lab-hgx-h100x8-ib: more than the queue can ever get, "
        "16 requested, 12 at most (quota 4, in use 0)",
    )


def test_pending_several_pod_sets_and_resources_give_one_blocker_each() -> None:
    wl = _pending(_status(), "mpi")
    assert [(b.pod_set, b.resource, b.shortfall) for b in wl.blockers] == [
        ("launcher", "cpu", 0.5),
        ("worker", "memory", 32 * GIB),
        ("worker", "nvidia.com/gpu", 2.0),
    ]
    assert wl.reasons[1] == (
        "pod set worker: memory in flavor lab-hgx-h100x8-ib: 32 GiB more needed (quota 512 GiB, in use 0 GiB)"
    )


def test_pending_preempted_workload_says_so_with_kueue_reason() -> None:
    wl = _pending(_status(), "low")
    assert wl.waiting_on is not None and wl.waiting_on.reason == "Preempted"
    assert [c.type for c in wl.conditions] == ["QuotaReserved", "Admitted", "Evicted", "Preempted"]
    assert wl.blockers == ()
    assert wl.reasons == (f"preempted (InCohortReclamation): {k.PREEMPTED}",)


def test_pending_unmatched_message_is_kept_raw() -> None:
    message = "LocalQueue nope doesn't exist"
    condition = {"type": "QuotaReserved", "status": "False", "reason": "Inadmissible", "message": message}
    wl_obj = k.workload("alpha", "lost", [condition], queue="nope")
    (wl,) = queue_status(k.cluster_queues(), k.local_queues(), [wl_obj]).pending
    assert (wl.cluster_queue, wl.blockers, wl.reasons) == (None, (), (message,))


def test_pending_new_workload_says_kueue_has_not_seen_it() -> None:
    wl = _pending(_status(), "fresh")
    assert wl.waiting_on is None
    assert wl.reasons == ("not yet seen by Kueue's scheduler (no QuotaReserved condition)",)


def test_queue_status_of_empty_or_odd_objects_does_not_raise() -> None:
    status = queue_status([{}, {"status": "x"}], [{"spec": None}], [{"status": {"conditions": "no"}}])
    assert [q.name for q in status.cluster_queues] == ["", ""]
    assert status.pending[0].reasons[0].startswith("not yet seen")


# ---------------------------------------------------------------------------------------------
# Prometheus


class _Answer(io.BytesIO):
    def __enter__(self) -> _Answer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _serve(monkeypatch: pytest.MonkeyPatch, body: Any, seen: list[str] | None = None) -> None:
    def urlopen(url: str, timeout: float) -> _Answer:
        if seen is not None:
            seen.append(url)
        if isinstance(body, BaseException):
            raise body
        return _Answer(json.dumps(body).encode())

    monkeypatch.setattr(prometheus.urllib.request, "urlopen", urlopen)


VECTOR = {
    "status": "success",
    "data": {
        "resultType": "vector",
        "result": [
            {"metric": {"cluster_queue": "alpha", "status": "inadmissible"}, "value": [1.7e9, "2"]},
            {"metric": {"cluster_queue": "alpha", "status": "active"}, "value": [1.7e9, "1"]},
            {"metric": {"cluster_queue": "beta", "status": "active"}, "value": [1.7e9, "NaN"]},
        ],
    },
}


def test_pending_metrics_reads_kueue_gauge_per_cluster_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    _serve(monkeypatch, VECTOR, seen)
    metrics = queue.pending_metrics("http://prom:9090/")
    assert seen == [
        "http://prom:9090/api/v1/query?query=sum+by+%28cluster_queue%2C+status%29+%28kueue_pending_workloads%29"
    ]
    assert [(m.cluster_queue, m.status, m.value) for m in metrics[:2]] == [
        ("alpha", "active", 1.0),
        ("alpha", "inadmissible", 2.0),
    ]


@pytest.mark.parametrize(
    "body",
    [
        urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")),
        TimeoutError("timed out"),
        {"status": "error", "errorType": "bad_data", "error": "parse error"},
        {"status": "success", "data": {"resultType": "matrix", "result": []}},
    ],
)
def test_instant_query_failures_are_not_assessed(monkeypatch: pytest.MonkeyPatch, body: Any) -> None:
    _serve(monkeypatch, body)
    with pytest.raises(NotAssessedError, match="Prometheus at http://prom:9090"):
        prometheus.query("http://prom:9090", "up")


def test_instant_query_http_error_says_status_and_message(monkeypatch: pytest.MonkeyPatch) -> None:
    error = urllib.error.HTTPError(
        "http://prom:9090",
        503,
        "Unavailable",
        {},
        io.BytesIO(b'{"error": "not ready"}'),  # type: ignore[arg-type]
    )
    _serve(monkeypatch, error)
    with pytest.raises(NotAssessedError, match="HTTP 503: not ready"):
        prometheus.query("http://prom:9090", "up")


def test_instant_query_refuses_a_url_that_is_not_http() -> None:
    with pytest.raises(UsageError, match="not a Prometheus URL"):
        prometheus.query("prom:9090", "up")


# ---------------------------------------------------------------------------------------------
# CLI


@pytest.fixture
def fake_cluster(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The fetcher replaced by the test objects; records the kubeconfig each call was given."""
    seen: list[Path] = []

    def fake(kubeconfig: Path) -> KueueObjects:
        seen.append(kubeconfig)
        return KueueObjects(tuple(k.cluster_queues()), tuple(k.local_queues()), tuple(k.workloads()))

    monkeypatch.setattr(queue, "fetch", fake)
    return seen


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_queue_tables_show_queues_usage_and_reasons(
    capsys: pytest.CaptureFixture[str], fake_cluster: list[Path], tmp_path: Path
) -> None:
    code, out, err = _run(capsys, "queue", "--kubeconfig", str(tmp_path / "kc"))
    assert (code, err) == (ExitCode.OK, "")
    assert fake_cluster == [tmp_path / "kc"]
    assert "2 cluster queues" in out and "alpha/alpha" in out
    assert "16 GiB / 64 GiB" in out
    pending = out[out.index("5 pending workloads") :].splitlines()
    assert pending[3:5] == [
        "alpha/job-train-2-3f2a1 (queue alpha -> alpha, Job/train-2, priority training 100): "
        "QuotaReserved False Pending",
        "  - nvidia.com/gpu in flavor lab-h200x1: 1 more needed (quota 1, in use 1)",
    ]
    assert (
        "alpha/job-fresh-3f2a1 (queue alpha -> alpha, Job/fresh, priority training 100): no condition yet"
        in out
    )
    assert "pending (Prometheus)" not in out


def test_cli_queue_json_is_the_records(
    capsys: pytest.CaptureFixture[str], fake_cluster: list[Path], tmp_path: Path
) -> None:
    code, out, _ = _run(capsys, "queue", "--kubeconfig", str(tmp_path / "kc"), "--json")
    data = json.loads(out)
    assert code == ExitCode.OK
    assert set(data) == {"cluster_queues", "local_queues", "pending", "metrics"}
    assert data["metrics"] is None
    train = next(w for w in data["pending"] if w["name"] == "job-train-2-3f2a1")
    assert train["blockers"][0] | {"nominal": 1.0} == {
        "pod_set": "main",
        "flavor": "lab-h200x1",
        "resource": "nvidia.com/gpu",
        "shortfall": 1.0,
        "shortfall_text": "1",
        "nominal": 1.0,
        "used": 1.0,
        "kind": "unused",
    }
    assert train["waiting_on"]["message"] == k.UNUSED_GPU


def test_cli_queue_prometheus_adds_kueue_gauge(
    capsys: pytest.CaptureFixture[str],
    fake_cluster: list[Path],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    _serve(monkeypatch, VECTOR)
    code, out, _ = _run(
        capsys, "queue", "--kubeconfig", str(tmp_path / "kc"), "--prometheus", "http://prom:9090"
    )
    assert code == ExitCode.OK
    assert "pending (Prometheus)" in out
    assert "3 (1 active, 2 inadmissible)" in out


def test_cli_queue_unreachable_prometheus_exits_2_in_one_line(
    capsys: pytest.CaptureFixture[str],
    fake_cluster: list[Path],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    _serve(monkeypatch, urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")))
    code, out, err = _run(
        capsys, "queue", "--kubeconfig", str(tmp_path / "kc"), "--prometheus", "http://prom:9"
    )
    assert (code, out) == (ExitCode.NOT_ASSESSED, "")
    assert err == "gpurack: cannot reach Prometheus at http://prom:9: [Errno 111] Connection refused\n"


def test_cli_queue_unreachable_cluster_exits_2_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def down(kubeconfig: Path) -> KueueObjects:
        raise NotAssessedError(f"cannot reach the cluster of {kubeconfig}: connection refused")

    monkeypatch.setattr(queue, "fetch", down)
    code, _, err = _run(capsys, "queue", "--kubeconfig", str(tmp_path / "kc"))
    assert code == ExitCode.NOT_ASSESSED
    assert err.count("\n") == 1 and "cannot reach the cluster" in err


def test_cli_queue_missing_kubeconfig_exits_64(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _run(capsys, "queue", "--kubeconfig", str(tmp_path / "nope"))
    assert code == ExitCode.USAGE
    assert (
        err == f"gpurack: kubeconfig not found: {tmp_path / 'nope'} "
        "(give --kubeconfig, or gpurack_kubeconfig in -i)\n"
    )


def test_cli_queue_bad_prometheus_url_exits_64(
    capsys: pytest.CaptureFixture[str], fake_cluster: list[Path], tmp_path: Path
) -> None:
    code, _, err = _run(capsys, "queue", "--kubeconfig", str(tmp_path / "kc"), "--prometheus", "prom:9090")
    assert code == ExitCode.USAGE
    assert "not a Prometheus URL" in err


def test_cli_queue_empty_cluster_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(queue, "fetch", lambda kubeconfig: KueueObjects((), (), ()))
    code, out, _ = _run(capsys, "queue")
    assert code == ExitCode.OK
    assert out.splitlines() == [
        "no Kueue ClusterQueues in this cluster: `gpurack run platform` creates them",
        "no pending workloads",
    ]


def _inventory(tmp_path: Path, value: str) -> Path:
    (tmp_path / "inv" / "group_vars" / "all").mkdir(parents=True)
    (tmp_path / "inv" / "hosts.yml").write_text(
        "all:\n  children:\n    gpu_nodes:\n      hosts:\n        w1: {}\n"
    )
    (tmp_path / "inv" / "group_vars" / "all" / "kube.yml").write_text(f"gpurack_kubeconfig: {value}\n")
    return tmp_path / "inv"


def test_kubeconfig_comes_from_the_inventory_then_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    inv = _inventory(tmp_path, "\"{{ '/srv/lab' }}/kubeconfig\"")
    assert queue_command.kubeconfig(None, str(inv)) == Path("/srv/lab/kubeconfig")
    assert queue_command.kubeconfig(tmp_path / "given", str(inv)) == tmp_path / "given"
    assert queue_command.kubeconfig(None, None) == tmp_path / ".kube" / "gpurack-kubernetes.conf"


def test_kubeconfig_of_an_inventory_without_it_is_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    inv = _inventory(tmp_path, "\"{{ '/srv' }}/kc\"")
    (inv / "group_vars" / "all" / "kube.yml").write_text("other: 1\n")
    assert queue_command.kubeconfig(None, str(inv)) == tmp_path / ".kube" / "gpurack-kubernetes.conf"


def test_cli_queue_missing_inventory_exits_64(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _run(capsys, "queue", "-i", str(tmp_path / "nope"))
    assert code == ExitCode.USAGE
    assert "inventory not found" in err


def test_cli_queue_inventory_without_hosts_exits_64(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "hosts.yml").write_text("all: {}\n")
    code, _, err = _run(capsys, "queue", "-i", str(tmp_path / "empty" / "hosts.yml"))
    assert code == ExitCode.USAGE
    assert err.endswith("has no hosts: ansible could not read gpurack_kubeconfig from it\n")
