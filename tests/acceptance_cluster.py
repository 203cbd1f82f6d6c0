"""A finished acceptance run as the acceptance role reads it from the cluster: a Workload
Kueue admitted after 4 s, three pods (rank 0 failed once its peer was deleted), the rank-0
logs of both attempts and the node used. Shared by the filter and the CLI tests."""

from __future__ import annotations

import json
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.filter.acceptance import acceptance_prices

T_DELETE = 1_764_583_300.0  # 2025-12-01T10:01:40Z


def event(kind: str, t: float, **fields: Any) -> str:
    return json.dumps({"gpurack": kind, "t": t, **fields})


def pod(
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
        event("resume", T_DELETE - 60, step=0),
        event("staging", T_DELETE - 59, seconds=3.0, bytes=90_000_000),
        event(
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
        *[event("step", T_DELETE - 50 + s, step=s, loss=2.0, samples_per_s=30.0) for s in range(1, 15)],
        event("checkpoint", T_DELETE - 40, step=10, seconds=1.2, bytes=270_000_000, uri="s3://alpha/c/10"),
        "RuntimeError: Connection closed by peer",
    ]
)
SECOND_LOG = "\n".join(
    [
        event("resume", T_DELETE + 20, step=10, seconds=2.5, bytes=270_000_000, uri="s3://alpha/c/10"),
        event("staging", T_DELETE + 18, seconds=2.0, bytes=90_000_000),
        event("step", T_DELETE + 31.5, step=11, loss=1.0, samples_per_s=25.0),
        event(
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


def raw(**changes: Any) -> dict[str, Any]:
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
            pod("accept-1-0-aaaaa", "0", "2025-12-01T10:00:05Z", exit_code=1),
            pod("accept-1-0-bbbbb", "0", "2025-12-01T10:01:50Z"),
            pod("accept-1-1-ccccc", "1", "2025-12-01T10:01:45Z"),
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
