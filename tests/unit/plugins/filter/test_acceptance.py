"""Acceptance filters: the queued Job and its Service, and the rows from what the role read
in the cluster (API objects as Kubernetes returns them, the rank-0 pods' logs)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.filter.acceptance import (
    FilterModule,
    acceptance_job_objects,
    acceptance_node,
    acceptance_prices,
    acceptance_row_line,
    acceptance_rows,
)

SPEC = {
    "name": "accept-1",
    "namespace": "alpha",
    "queue": "alpha",
    "image": "registry.gpurack.lab/gpurack-trainer:0.1.0",
    "data": "s3://alpha/datasets/vader/vader_lexicon.txt",
    "weights": "s3://alpha/models/all-MiniLM-L6-v2/",
    "checkpoints": "s3://alpha/checkpoints/accept-1/",
    "s3_secret": "gpurack-object-store",
    "priority_class": "training",
}
T_DELETE = 1_764_583_300.0  # 2025-12-01T10:01:40Z


def _event(kind: str, t: float, **fields: Any) -> str:
    return json.dumps({"gpurack": kind, "t": t, **fields})


def _pod(
    name: str, index: str, created: str, node: str = "lab-w2", exit_code: int | None = None
) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Running"}
    if exit_code is not None:
        status = {
            "phase": "Failed",
            "containerStatuses": [{"state": {"terminated": {"exitCode": exit_code, "reason": "Error"}}}],
        }
    return {
        "metadata": {
            "name": name,
            "creationTimestamp": created,
            "labels": {"job-name": "accept-1", "batch.kubernetes.io/job-completion-index": index},
        },
        "spec": {"nodeName": node},
        "status": status,
    }


FIRST_LOG = "\n".join(
    [
        _event("resume", T_DELETE - 60, step=0),
        _event("staging", T_DELETE - 59, seconds=3.0, bytes=90_000_000),
        _event(
            "allreduce",
            T_DELETE - 55,
            bytes=8 << 20,
            iterations=10,
            seconds=2.0,
            algbw_gbps=0.04,
            busbw_gbps=0.04,
            world_size=2,
            backend="gloo",
        ),
        *[_event("step", T_DELETE - 50 + s, step=s, loss=2.0, samples_per_s=30.0) for s in range(1, 15)],
        _event("checkpoint", T_DELETE - 40, step=10, seconds=1.2, bytes=270_000_000, uri="s3://alpha/c/10"),
        "RuntimeError: Connection closed by peer",
    ]
)
SECOND_LOG = "\n".join(
    [
        _event("resume", T_DELETE + 20, step=10, seconds=2.5, bytes=270_000_000, uri="s3://alpha/c/10"),
        _event("staging", T_DELETE + 18, seconds=2.0, bytes=90_000_000),
        _event("step", T_DELETE + 31.5, step=11, loss=1.0, samples_per_s=25.0),
        _event(
            "done",
            T_DELETE + 80,
            steps=30,
            samples=640,
            seconds=50.0,
            elapsed_s=90.0,
            samples_per_s=12.8,
            loss=0.5,
            first_loss=2.4,
            rank=0,
            world_size=2,
            device="cpu",
        ),
    ]
)
WORKLOAD = {
    "metadata": {
        "name": "job-accept-1-abcde",
        "creationTimestamp": "2025-12-01T10:00:00Z",
        "ownerReferences": [{"name": "accept-1"}],
    },
    "status": {
        "conditions": [
            {"type": "QuotaReserved", "status": "True", "lastTransitionTime": "2025-12-01T10:00:04Z"},
            {"type": "Admitted", "status": "True", "lastTransitionTime": "2025-12-01T10:00:04Z"},
        ],
        "admission": {
            "clusterQueue": "alpha",
            "podSetAssignments": [
                {
                    "name": "main",
                    "flavors": {"cpu": "lab-hgx-h100x8-ib", "nvidia.com/gpu": "lab-hgx-h100x8-ib"},
                }
            ],
        },
    },
}
NODE_LABELS = {
    "gpurack.io/pool": "lab-hgx-h100x8-ib",
    "gpurack.io/accelerator": "h100-80gb",
    "gpurack.io/fabric": "infiniband",
}
HOSTVARS = {
    "lab-w2": {
        "gpurack_pool": {"name": "lab-hgx-h100x8-ib", "cost": {"gpu_hour": 2.0}},
        "gpurack_expect": {"gpu": {"count": 8}},
    },
}


def _raw(**changes: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "team": "alpha",
        "queue": "alpha",
        "pods_wanted": 2,
        "gpus_per_pod": 1,
        "submitted": "2025-12-01T10:00:00Z",
        "finished": "2025-12-01T10:06:00+00:00",
        "job": {
            "status": {
                "completionTime": "2025-12-01T10:03:04Z",
                "conditions": [{"type": "Complete", "status": "True"}],
            }
        },
        "workload": WORKLOAD,
        "events": [
            {
                "reason": "Pending",
                "message": "couldn't assign flavors to pod set main: insufficient unused quota",
                "lastTimestamp": "2025-12-01T10:00:01Z",
            }
        ],
        "pods": [
            _pod("accept-1-0-aaaaa", "0", "2025-12-01T10:00:05Z", exit_code=1),
            _pod("accept-1-0-bbbbb", "0", "2025-12-01T10:01:50Z"),
            _pod("accept-1-1-ccccc", "1", "2025-12-01T10:01:45Z"),
        ],
        "nodes": [
            {"metadata": {"name": "lab-w2", "labels": NODE_LABELS}},
            {"metadata": {"name": "lab-w1", "labels": {}}},
        ],
        "logs": {"accept-1-0-aaaaa": FIRST_LOG, "accept-1-0-bbbbb": SECOND_LOG},
        "deleted": {"at": "2025-12-01T10:01:40+00:00"},
        "storage": {"bucket": "alpha"},
        "prices": acceptance_prices(HOSTVARS, ["lab-w2"], {"currency": "EUR"}),
        "failure": "",
    }
    raw.update(changes)
    return raw


def _by_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in rows}


def test_the_job_is_queued_indexed_and_restricted() -> None:
    service, job = acceptance_job_objects(SPEC)
    assert service["kind"] == "Service" and service["spec"]["clusterIP"] == "None"
    assert service["spec"]["publishNotReadyAddresses"] is True
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "alpha"
    assert job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "training"
    spec = job["spec"]
    assert (spec["suspend"], spec["completionMode"], spec["completions"], spec["parallelism"]) == (
        True,
        "Indexed",
        2,
        2,
    )
    pod = spec["template"]["spec"]
    assert pod["subdomain"] == "accept-1"
    container = pod["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["MASTER_ADDR"] == "accept-1-0.accept-1" and env["WORLD_SIZE"] == "2"
    assert container["envFrom"] == [{"secretRef": {"name": "gpurack-object-store"}}]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
    context = container["securityContext"]
    assert context["runAsNonRoot"] and not context["allowPrivilegeEscalation"]
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert "--checkpoint-interval-steps" in container["args"]


def test_a_job_spec_without_its_image_is_refused() -> None:
    with pytest.raises(AnsibleFilterError, match="acceptance_job_objects"):
        acceptance_job_objects({k: v for k, v in SPEC.items() if k != "image"})


def test_rows_from_the_cluster_objects_and_logs() -> None:
    rows = _by_id(acceptance_rows(_raw()))
    assert list(rows) == [
        "accept.queue",
        "accept.staging",
        "accept.allreduce",
        "accept.train",
        "accept.restore",
        "accept.labels",
        "accept.cost",
    ]
    assert rows["accept.queue"]["measured"] == 4.0  # created 10:00:00, admitted 10:00:04
    assert "insufficient unused quota" in rows["accept.queue"]["reason"]
    restore = rows["accept.restore"]
    assert restore["measured"] == 31.5  # deleted at T, first step after the resume at T + 31.5
    assert restore["details"]["deleted_at_step"] == 14 and restore["details"]["steps_lost"] == 4
    assert rows["accept.labels"]["details"]["pool"] == {"lab-w2": {"gpurack.io/pool": "lab-hgx-h100x8-ib"}}
    cost = rows["accept.cost"]
    # Admitted 10:00:04 to completed 10:03:04: 2 GPUs x 0.05 h x 2.0 = 0.2, for 30 steps x 640/20
    # samples (640 samples in the 20 steps after the resume at 10).
    assert cost["details"]["total"] == pytest.approx(0.2)
    assert cost["details"]["accepted_units"] == pytest.approx(30 * 640 / 20)
    assert {r["verdict"] for r in rows.values()} == {"pass"}


def test_a_failed_job_says_why_and_costs_as_failed() -> None:
    failed = {
        "status": {
            "conditions": [
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "BackoffLimitExceeded",
                    "message": "Job has reached the specified backoff limit",
                }
            ]
        }
    }
    pods = [_pod("accept-1-0-aaaaa", "0", "2025-12-01T10:00:05Z", exit_code=2)]
    log = _event("resume", T_DELETE, step=0)
    rows = _by_id(acceptance_rows(_raw(job=failed, pods=pods, logs={"accept-1-0-aaaaa": log}, deleted={})))
    assert rows["accept.train"]["verdict"] == "fail"
    assert "BackoffLimitExceeded" in rows["accept.train"]["reason"]
    assert "accept-1-0-aaaaa exited 2" in rows["accept.train"]["reason"]
    assert rows["accept.cost"]["verdict"] == "fail"


def test_a_job_never_admitted_gives_kueues_reason() -> None:
    message = (
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu "
        "in flavor lab-h200x1, 2 more needed"
    )
    waiting = {
        "metadata": WORKLOAD["metadata"],
        "status": {
            "conditions": [
                {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": message}
            ]
        },
    }
    rows = _by_id(acceptance_rows(_raw(workload=waiting, job={}, pods=[], logs={}, deleted={})))
    assert rows["accept.queue"]["verdict"] == "fail"
    assert rows["accept.queue"]["reason"] == f"not admitted: {message}"


def test_prices_and_nodes_and_lines() -> None:
    with pytest.raises(AnsibleFilterError, match=r"no gpurack_pool\.cost\.gpu_hour"):
        acceptance_prices({"w": {"gpurack_pool": {"name": "p"}}}, ["w"])
    node = acceptance_node(
        {"metadata": {"name": "n", "labels": {"a": "b"}, "uid": "x"}, "status": {"big": 1}}
    )
    assert node == {"metadata": {"name": "n", "labels": {"a": "b"}}}
    line = acceptance_row_line(
        {"id": "accept.queue", "verdict": "pass", "measured": 4.0, "unit": "s", "reason": "x"}
    )
    assert line.split() == ["accept.queue", "pass", "4", "s", "x"]
    assert set(FilterModule().filters()) == {
        "acceptance_job_objects",
        "acceptance_node",
        "acceptance_prices",
        "acceptance_row_line",
        "acceptance_rows",
    }
