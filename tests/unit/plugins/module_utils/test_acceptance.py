"""The seven acceptance rows from a hand-written trainer log and observations."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance import settings, trainer_log
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance import table as rows

START, END = "2026-12-01T10:00:00+00:00", "2026-12-01T10:06:00+00:00"  # 0.1 h


def log(*events: dict[str, Any]) -> list[str]:
    return [json.dumps({"gpurack": e.pop("event"), **e}) for e in events]


# Two attempts: checkpoints at 10 and 20, the pod deleted at step 27, resumed from 20.
TRAINER_LOG = [
    "W1201 some library warning",
    *log(
        {"event": "resume", "step": 0},
        {"event": "staging", "seconds": 2.0, "bytes": 90_000_000},
        {
            "event": "allreduce",
            "bytes": 8_388_608,
            "iterations": 10,
            "seconds": 1.0,
            "algbw_gbps": 0.5,
            "busbw_gbps": 0.5,
            "world_size": 2,
            "backend": "gloo",
        },
        {"event": "step", "step": 10, "loss": 2.0, "samples_per_s": 30.0},
        {"event": "checkpoint", "step": 10, "seconds": 1.5, "bytes": 270_000_000, "uri": "s3://b/c/10"},
        {"event": "checkpoint", "step": 20, "seconds": 2.5, "bytes": 270_000_000, "uri": "s3://b/c/20"},
    ),
    "Traceback (most recent call last): killed",
    *log(
        {"event": "resume", "step": 20, "seconds": 4.0, "bytes": 270_000_000, "uri": "s3://b/c/20"},
        {"event": "staging", "seconds": 1.0, "bytes": 90_000_000},
        {"event": "checkpoint", "step": 30, "seconds": 2.0, "bytes": 270_000_000, "uri": "s3://b/c/30"},
        {
            "event": "done",
            "steps": 40,
            "samples": 640,
            "seconds": 30.0,
            "elapsed_s": 90.0,
            "samples_per_s": 21.3,
            "loss": 0.4,
            "first_loss": 2.5,
            "rank": 0,
            "world_size": 2,
            "device": "cpu",
        },
    ),
]
LABELS = {
    "gpurack.io/pool": "h100-train-a",
    "gpurack.io/accelerator": "h100-80gb",
    "gpurack.io/fabric": "infiniband",
}


def observed(**changes: Any) -> rows.Observed:
    data: dict[str, Any] = {
        "team": "research",
        "queue": "research",
        "pool": "h100-train-a",
        "pods": 2,
        "gpus_per_pod": 1,
        "started": START,
        "finished": END,
        "admitted": True,
        "queue_wait_s": 3.0,
        "queue_reason": "",
        "trainer_log": TRAINER_LOG,
        "deleted_at_step": 27,
        "restore_s": 41.0,
        "nodes": {"lab-w1": LABELS, "lab-w2": LABELS},
        "storage": {"bucket": "research"},
        "gpu_hour": 2.0,
        "monthly": {},
        "currency": "EUR",
    }
    data.update(changes)
    return rows.Observed.from_mapping(data)


def by_id(results: list[Any]) -> dict[str, Any]:
    return {r.id: r for r in results}


def test_the_log_splits_into_attempts_and_ignores_other_lines() -> None:
    report = trainer_log.read(TRAINER_LOG)
    assert len(report.attempts) == 2
    assert report.attempts[0].last_step == 20
    assert report.finished and report.final is not None and report.final.done is not None
    assert report.final.done["steps"] == 40


def test_seven_rows_in_the_seeds_order_all_pass_without_thresholds() -> None:
    results = rows.rows(observed(), settings.read(None))
    assert [r.id for r in results] == [
        "accept.queue",
        "accept.staging",
        "accept.allreduce",
        "accept.train",
        "accept.restore",
        "accept.labels",
        "accept.cost",
    ]
    assert {r.verdict.value for r in results} == {"pass"}, [(r.id, r.reason) for r in results]


def test_each_start_is_an_attempt_whichever_of_staging_and_resume_it_prints_first() -> None:
    # The trainer prints staging, then resume (lab run of 2026-12-03): pod 1 reached step 25,
    # pod 2 resumed from the checkpoint of step 25.
    first = log(
        {"event": "staging", "t": 100.0},
        {"event": "resume", "step": 0, "t": 101.0},
        {"event": "step", "step": 25, "t": 130.0},
        {"event": "checkpoint", "step": 25, "t": 131.0},
    )
    second = log({"event": "staging", "t": 170.0}, {"event": "resume", "step": 25, "t": 171.0},
                 {"event": "step", "step": 30, "t": 178.0})  # fmt: skip
    report = trainer_log.read([*first, *second])
    assert [(a.resume or {}).get("step") for a in report.attempts] == [0, 25]
    assert [a.last_step for a in report.attempts] == [25, 30]
    assert report.attempts[1].staging is not None


def test_restore_counts_the_steps_lost_since_the_checkpoint_restored() -> None:
    row = by_id(rows.rows(observed(), settings.read(None)))["accept.restore"]
    assert row.measured == 41.0
    assert row.details["steps_lost"] == 7  # deleted at 27, restored 20
    assert row.details["checkpoint_write_s"] == 2.5  # the slowest write
    # The default steps_lost threshold is one checkpoint interval: 7 lost > 5 fails.
    tight = settings.read({"checkpoint_interval_steps": 5})
    failed = by_id(rows.rows(observed(), tight))["accept.restore"]
    assert failed.verdict.value == "fail"
    assert "steps_lost 7 is not <= 5" in failed.reason


def test_cost_per_accepted_unit_by_hand() -> None:
    # 2 GPUs x 0.1 h x 2.0 = 0.4 for 40 steps x (640 samples / 20 steps) = 1,280 samples.
    base = settings.read({"baseline": {"kind": "unit", "price": 0.0005}, "thresholds": {"cost_ratio": 0.5}})
    row = by_id(rows.rows(observed(), base))["accept.cost"]
    assert row.details["accepted_units"] == pytest.approx(1280)
    assert row.measured == pytest.approx(0.4 / 1280)
    # The baseline: 1,280 x 0.0005 = 0.64; ours 0.4 -> 0.625x, above the 0.5 asked: a warning.
    assert row.details["ratio"] == pytest.approx(0.625)
    assert row.verdict.value == "warn"


def test_a_failed_job_has_no_accepted_units_and_fails_the_cost_row() -> None:
    row = by_id(rows.rows(observed(job_failed=True, failure="pod exited 1"), settings.read(None)))[
        "accept.cost"
    ]
    assert row.verdict.value == "fail"
    assert "no accepted units" in row.reason


def test_a_job_kueue_did_not_admit_says_why() -> None:
    reason = (
        "couldn't assign flavors to pod set main: "
        "insufficient quota for nvidia.com/gpu in flavor h100-train-a"
    )
    results = by_id(
        rows.rows(
            observed(admitted=False, queue_wait_s=None, queue_reason=reason, trainer_log=[]),
            settings.read(None),
        )
    )
    assert results["accept.queue"].verdict.value == "fail"
    assert "insufficient quota for nvidia.com/gpu" in results["accept.queue"].reason
    assert results["accept.train"].verdict.value == "fail"


def test_thresholds_fail_slow_figures_and_name_them() -> None:
    tight = settings.read({"thresholds": {"queue_wait_s": 1, "busbw_gbps": 1.0, "samples_per_s": 50}})
    results = by_id(rows.rows(observed(), tight))
    assert results["accept.queue"].reason.startswith("queue_wait_s 3 is not <= 1")
    assert results["accept.allreduce"].verdict.value == "fail"
    assert results["accept.train"].expected == {"samples_per_s": ">= 50"}


def test_one_pod_skips_the_allreduce_with_the_reason() -> None:
    row = by_id(rows.rows(observed(pods=1), settings.read(None)))["accept.allreduce"]
    assert row.verdict.value == "skip" and row.reason == "one pod: the job is not distributed"


def test_a_node_without_the_pool_label_fails_the_labels_row() -> None:
    nodes = {"lab-w1": LABELS, "lab-w2": {"gpurack.io/fabric": "roce"}}
    row = by_id(rows.rows(observed(nodes=nodes), settings.read(None)))["accept.labels"]
    assert row.verdict.value == "fail" and "lab-w2" in row.reason
    assert row.details["network"] == {
        "lab-w1": {"gpurack.io/fabric": "infiniband"},
        "lab-w2": {"gpurack.io/fabric": "roce"},
    }


def test_the_labels_row_says_under_which_leaf_and_spine_each_node_ran() -> None:
    leaf = {"network.topology.nvidia.com/leaf": "leaf1", "network.topology.nvidia.com/spine": "spine1"}
    other = {**leaf, "network.topology.nvidia.com/leaf": "leaf2"}
    nodes = {"lab-w1": {**LABELS, **leaf}, "lab-w3": {**LABELS, **other}}
    row = by_id(rows.rows(observed(nodes=nodes), settings.read(None)))["accept.labels"]
    assert row.details["network"]["lab-w1"] == {"gpurack.io/fabric": "infiniband", **leaf}
    assert row.details["network"]["lab-w3"]["network.topology.nvidia.com/leaf"] == "leaf2"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "must be a mapping"),
        ({"window": 3}, "unknown key(s) window"),
        ({"thresholds": {"queue_wait": 3}}, "unknown key(s) queue_wait"),
        ({"window_s": 0}, "window_s must be a finite number above 0"),
        ({"checkpoint_interval_steps": True}, "whole number of at least 1"),
        ({"baseline": {"kind": "token", "price": 1}}, "baseline.kind must be one of gpu_hour, unit"),
        ({"baseline": {"kind": "unit", "price": -1}}, "baseline.price must be a finite number at least 0"),
        ({"thresholds": {"restore_s": "fast"}}, "thresholds.restore_s must be a finite number"),
    ],
)
def test_malformed_settings_name_the_key(value: Any, message: str) -> None:
    with pytest.raises(settings.SettingsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        settings.read(value)
