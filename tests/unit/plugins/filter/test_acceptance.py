"""Acceptance filters: the queued Job and its Service, and the rows from what the role read
in the cluster (API objects as Kubernetes returns them, the rank-0 pods' logs)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from acceptance_cluster import T_DELETE, WORKLOAD, event, pod, raw
from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.filter.acceptance import (
    FilterModule,
    acceptance_job_objects,
    acceptance_node,
    acceptance_prices,
    acceptance_row_line,
    acceptance_rows,
    acceptance_summary,
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


def test_the_job_asks_kueue_to_keep_its_pods_under_one_leaf_where_asked() -> None:
    _service, job = acceptance_job_objects(SPEC)
    assert "annotations" not in job["spec"]["template"]["metadata"]  # no topology asked: none
    leaf = "network.topology.nvidia.com/leaf"
    _service, job = acceptance_job_objects({**SPEC, "topology_level": leaf})
    assert job["spec"]["template"]["metadata"]["annotations"] == {
        "kueue.x-k8s.io/podset-required-topology": leaf
    }
    _service, job = acceptance_job_objects({**SPEC, "topology_level": leaf, "topology_mode": "preferred"})
    assert job["spec"]["template"]["metadata"]["annotations"] == {
        "kueue.x-k8s.io/podset-preferred-topology": leaf
    }
    with pytest.raises(AnsibleFilterError, match="topology_mode must be required or preferred"):
        acceptance_job_objects({**SPEC, "topology_level": leaf, "topology_mode": "always"})


def test_a_job_spec_without_its_image_is_refused() -> None:
    with pytest.raises(AnsibleFilterError, match="acceptance_job_objects"):
        acceptance_job_objects({k: v for k, v in SPEC.items() if k != "image"})


def test_rows_from_the_cluster_objects_and_logs() -> None:
    rows = _by_id(acceptance_rows(raw()))
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
    pods = [pod("accept-1-0-aaaaa", "0", "2025-12-01T10:00:05Z", exit_code=2)]
    log = event("resume", T_DELETE, step=0)
    rows = _by_id(acceptance_rows(raw(job=failed, pods=pods, logs={"accept-1-0-aaaaa": log}, deleted={})))
    assert rows["accept.train"]["verdict"] == "fail"
    assert "BackoffLimitExceeded" in rows["accept.train"]["reason"]
    assert "accept-1-0-aaaaa exited 2" in rows["accept.train"]["reason"]
    assert rows["accept.cost"]["verdict"] == "fail"


def test_why_the_role_stopped_short_comes_first_in_the_reason() -> None:
    stopped = "log of accept-1-0-aaaaa unreadable: dial tcp 172.30.42.12:10250: connect: connection refused"
    rows = _by_id(acceptance_rows(raw(logs={}, failure=stopped)))
    assert rows["accept.staging"]["verdict"] == "fail"
    assert rows["accept.staging"]["reason"] == f"the job staged nothing: {stopped}"


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
    rows = _by_id(acceptance_rows(raw(workload=waiting, job={}, pods=[], logs={}, deleted={})))
    assert rows["accept.queue"]["verdict"] == "fail"
    assert rows["accept.queue"]["reason"] == f"not admitted: {message}"
    assert rows["accept.cost"]["verdict"] == "skip"
    assert rows["accept.cost"]["reason"] == "not admitted: the job held no GPUs, so nothing was spent or done"


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
        "acceptance_summary",
        "inference_acceptance_rows",
        "inference_acceptance_summary",
        "inference_load_job",
    }


def test_the_summary_of_an_accepted_run() -> None:
    rows = acceptance_rows(raw())
    summary = acceptance_summary(raw(), rows)
    assert summary["outcome"] == "accepted" and summary["verdict"] == "pass"
    assert summary["units"] == pytest.approx(30 * 640 / 20)  # the cost row's units, the same rule
    assert summary["units"] == _by_id(rows)["accept.cost"]["details"]["accepted_units"]
    assert summary["cost_total"] == pytest.approx(0.2)
    assert summary["cost_per_unit"] == _by_id(rows)["accept.cost"]["measured"]
    assert (summary["gpus"], summary["queue_wait_s"]) == (2, 4.0)
    assert summary["started"] == "2025-12-01T10:00:04+00:00"
    json.dumps(summary)  # plain JSON types: the role writes it with to_nice_json


def test_a_failed_row_fails_the_run_and_keeps_no_units() -> None:
    rows = acceptance_rows(raw(), {"thresholds": {"restore_s": 10}})
    summary = acceptance_summary(raw(), rows)
    assert (summary["outcome"], summary["verdict"], summary["units"]) == ("failed", "fail", 0.0)


def test_a_run_never_admitted_is_other_and_unpriced() -> None:
    waiting = {"metadata": WORKLOAD["metadata"], "status": {"conditions": []}}
    gathered = raw(workload=waiting, job={}, pods=[], logs={}, deleted={})
    summary = acceptance_summary(gathered, acceptance_rows(gathered))
    assert (summary["outcome"], summary["units"], summary["cost_per_unit"]) == ("other", 0.0, None)


def test_the_summary_refuses_what_is_not_rows() -> None:
    with pytest.raises(AnsibleFilterError, match="acceptance_summary"):
        acceptance_summary(raw(), "rows")


def test_the_inference_filters_refuse_bad_input_in_one_line() -> None:
    filters = FilterModule().filters()
    job = {
        "name": "l",
        "namespace": "beta",
        "image": "i",
        "model": "m",
        "concurrency": 1,
        "requests": 1,
        "seconds": 1,
    }
    with pytest.raises(AnsibleFilterError, match="inference_load_job: load job: no url"):
        filters["inference_load_job"](job)
    with pytest.raises(
        AnsibleFilterError, match=r"inference_acceptance_rows: .*requests must be a whole number"
    ):
        filters["inference_acceptance_rows"]({"team": "beta"}, {"requests": -1})
    with pytest.raises(AnsibleFilterError, match="inference_acceptance_rows: 'started'"):
        filters["inference_acceptance_rows"]({"team": "beta", "service": "embed"})
    with pytest.raises(AnsibleFilterError, match="expects the gathered mapping and its rows"):
        filters["inference_acceptance_summary"]({}, "rows")
