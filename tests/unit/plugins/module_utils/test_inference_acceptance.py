"""The eight inference acceptance rows, from hand-made observations: what each figure is, when a
row fails, the settings' bounds, and the load tool's Job."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance import (
    InferenceObserved,
    LoadSpec,
    SettingsError,
    inference_rows,
    inference_summary,
    load_job,
    read_inference_settings,
)
from inference_run import RAW, T0, cache_line, load

SETTINGS = {"baseline_per_1000": 0.5, "thresholds": {"isolation_ratio": 2.0, "cold_start_s": 300}}


def _rows(
    raw: dict[str, Any] = RAW, settings: Any = SETTINGS, objective: Any = 500
) -> dict[str, dict[str, Any]]:
    made = inference_rows(InferenceObserved.from_mapping(raw), read_inference_settings(settings, objective))
    return {r.id: r.to_dict() for r in made}


def _with(**changes: Any) -> dict[str, Any]:
    raw = copy.deepcopy(RAW)
    raw.update(changes)
    return raw


def test_a_good_run_passes_every_row_with_its_figure() -> None:
    rows = _rows()
    assert list(rows) == [
        "infer.cold_start",
        "infer.warm_start",
        "infer.load.c1",
        "infer.load.c8",
        "infer.rollout",
        "infer.autoscale",
        "infer.isolation",
        "infer.cost",
    ]
    assert {i: r["verdict"] for i, r in rows.items()} == dict.fromkeys(rows, "pass")
    cold = rows["infer.cold_start"]
    assert cold["measured"] == 60.5  # created to the first good answer
    phases = {
        "scheduling_s": 1.0,
        "container_start_s": 2.0,
        "download_s": 8.0,
        "model_load_s": 50.0,
        "first_answer_s": 0.5,
        "cache_hit": False,
    }
    assert {k: cold["details"][k] for k in phases} == phases
    assert rows["infer.warm_start"]["measured"] == 41.0
    assert rows["infer.warm_start"]["details"]["cache_hit"] is True
    # The launcher names the model's size either way; a hit downloads none of it.
    assert rows["infer.cold_start"]["details"]["downloaded_bytes"] == 91_617_632
    assert rows["infer.warm_start"]["details"]["downloaded_bytes"] == 0
    assert rows["infer.warm_start"]["details"]["model_bytes"] == 91_617_632
    # The p99 threshold is the service's latency objective when the inventory sets none.
    assert rows["infer.load.c8"]["measured"] == 400.0
    assert rows["infer.load.c8"]["expected"] == {"p99_ms": "<= 500", "error_rate": "<= 0"}
    assert rows["infer.rollout"]["measured"] == 0 and rows["infer.rollout"]["details"]["rollout_s"] == 90.0
    assert rows["infer.autoscale"]["details"] == {"up_s": 120.0, "down_s": 55.0, "peak": 2}
    assert rows["infer.isolation"]["measured"] == 1.5


def test_the_cost_is_the_seeds_formula_per_1000_requests() -> None:
    cost = _rows()["infer.cost"]
    # 2 GPUs (replicas.max) for 1 h at 2.0, and 1 h of 730 a month: 5.0, over the requests
    # answered well in every load (300 + 300 + 1000 + 300 = 1900).
    assert cost["details"]["accepted_requests"] == 1900
    assert cost["measured"] == pytest.approx(5.0 / 1900 * 1000, rel=1e-5)
    assert cost["unit"] == "EUR/1000 requests"
    assert cost["details"]["ratio"] == pytest.approx(5.0 / 1900 * 1000 / 0.5, rel=1e-3)
    assert cost["verdict"] == "pass"  # no cost_ratio threshold set
    assert _rows(settings={**SETTINGS, "thresholds": {"cost_ratio": 1.0}})["infer.cost"]["verdict"] == "warn"


def test_a_warm_start_that_downloads_fails() -> None:
    raw = copy.deepcopy(RAW)
    raw["starts"][1]["log"] = cache_line(False, 8.0, T0 + 302)
    warm = _rows(raw)["infer.warm_start"]
    assert warm["verdict"] == "fail"
    assert "downloaded again" in warm["reason"]


def test_a_server_that_never_answered_fails_its_start_and_the_run() -> None:
    raw = copy.deepcopy(RAW)
    raw["starts"][0]["first_answer"] = None
    raw["failure"] = "Wait for the probe's answer: timed out"
    cold = _rows(raw)["infer.cold_start"]
    assert cold["verdict"] == "fail" and "timed out" in cold["reason"]


def test_failed_requests_fail_the_load_and_the_rollout() -> None:
    loads = [{"concurrency": 1, "result": load(300, failures=3)}, RAW["loads"][1]]
    rows = _rows(_with(loads=loads, rollout={**RAW["rollout"], "result": load(1000, failures=2)}))
    assert rows["infer.load.c1"]["verdict"] == "fail" and "error_rate 0.01" in rows["infer.load.c1"]["reason"]
    assert rows["infer.rollout"]["verdict"] == "fail" and rows["infer.rollout"]["measured"] == 2


def test_a_request_sent_again_after_a_stopping_pod_closed_it_passes_and_is_named() -> None:
    row = _rows(_with(rollout={**RAW["rollout"], "result": load(1000, retried=1)}))["infer.rollout"]
    assert (row["verdict"], row["measured"], row["details"]["retried"]) == ("pass", 0, 1)
    assert row["reason"] == "1 sent again after their connection closed unanswered"
    assert _rows(_with())["infer.rollout"]["reason"] == ""


def test_the_load_tools_line_is_read_from_a_log() -> None:
    log = "locust says hello\n" + json.dumps(load(300, p99=42.0))
    assert _rows(_with(loads=[{"result": log}, RAW["loads"][1]]))["infer.load.c1"]["measured"] == 42.0


def test_a_rollout_that_never_completed_fails() -> None:
    assert (
        _rows(_with(rollout={"patched": "2026-12-04T10:20:00", "result": load(10)}))["infer.rollout"][
            "verdict"
        ]
        == "fail"
    )


def test_the_autoscaler_row_fails_short_of_max_and_skips_without_room() -> None:
    short = _rows(_with(autoscale={"min": 1, "max": 2, "peak": 1, "load_started": "2026-12-04T10:30:00"}))
    assert short["infer.autoscale"]["verdict"] == "fail"
    assert "never 2 Ready replicas under load (peak 1)" in short["infer.autoscale"]["reason"]
    fixed = _rows(_with(autoscale={"min": 1, "max": 1}))
    assert fixed["infer.autoscale"]["verdict"] == "skip"


def test_isolation_fails_above_its_threshold_or_without_training() -> None:
    slow = _rows(_with(isolation={"with_training": load(300, p99=250.0), "training_pods": 1}))
    assert slow["infer.isolation"]["measured"] == 2.5 and slow["infer.isolation"]["verdict"] == "fail"
    alone = _rows(_with(isolation={"with_training": load(300), "training_pods": 0}))
    assert alone["infer.isolation"]["verdict"] == "fail"


def test_the_summary_counts_requests_and_prices_one() -> None:
    seen = InferenceObserved.from_mapping(RAW)
    results = [r.to_dict() for r in inference_rows(seen, read_inference_settings(SETTINGS, 500))]
    summary = inference_summary(seen, results)
    assert summary["outcome"] == "accepted" and summary["units"] == 1900.0
    assert summary["cost_per_unit"] == pytest.approx(5.0 / 1900, rel=1e-5)
    assert summary["queue"] == "embed" and summary["gpus"] == 2
    failed = [{**r, "verdict": "fail"} if r["id"] == "infer.rollout" else r for r in results]
    assert inference_summary(seen, failed)["outcome"] == "failed"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"requests": 0}, "requests must be a whole number from 1 to 100000"),
        ({"seconds": 3600}, "seconds must be a finite number above 0 and at most 900"),
        ({"concurrency": [8]}, "two load levels"),
        ({"concurrency": [8, 1]}, "a lower then a higher level"),
        ({"thresholds": {"p99": 1}}, "unknown key(s) p99"),
        ({"burst": 1}, "unknown key(s) burst"),
        ("fast", "must be a mapping"),
    ],
)
def test_settings_are_bounded_and_named(settings: Any, message: str) -> None:
    with pytest.raises(SettingsError, match=None) as refused:
        read_inference_settings(settings)
    assert message in str(refused.value)


def test_settings_defaults() -> None:
    wanted = read_inference_settings(None, 250)
    assert wanted.concurrency == (1, 8) and wanted.requests == 400 and wanted.seconds == 60
    assert wanted.threshold("p99_ms") == 250 and wanted.threshold("rollout_failures") == 0
    assert wanted.threshold("scale_up_s") is None


def test_the_load_job_is_bounded_and_runs_anywhere_in_the_cluster() -> None:
    spec = {
        "name": "infer-1-cold",
        "namespace": "beta",
        "image": "loadgen:1",
        "url": "http://embed.beta.svc",
        "model": "embed",
        "concurrency": "1",
        "requests": "1",
        "seconds": "10",
        "wait_s": "600",
    }
    job = load_job(LoadSpec.from_mapping(spec))
    pod = job["spec"]["template"]["spec"]
    assert pod["containers"][0]["args"] == [
        "--url",
        "http://embed.beta.svc",
        "--model",
        "embed",
        "--concurrency",
        "1",
        "--requests",
        "1",
        "--seconds",
        "10",
        "--wait-ready",
        "600",
    ]
    assert job["spec"]["backoffLimit"] == 0 and job["spec"]["activeDeadlineSeconds"] == 730
    assert pod["tolerations"] == [{"key": "gpurack.io/pool", "operator": "Exists", "effect": "NoSchedule"}]
    # Away from the model servers' nodes where it can: their CPU is what it measures.
    (term,) = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["podAffinityTerm"]["labelSelector"] == {
        "matchExpressions": [{"key": "gpurack.io/inference-service", "operator": "Exists"}]
    }
    assert pod["containers"][0]["securityContext"]["runAsNonRoot"] is True
    with pytest.raises(ValueError, match="no url"):
        LoadSpec.from_mapping({k: v for k, v in spec.items() if k != "url"})
    with pytest.raises(ValueError, match="concurrency and requests must be >= 1"):
        LoadSpec.from_mapping({**spec, "concurrency": 0})


def test_a_rollout_the_load_did_not_cover_fails() -> None:
    # The load's first answer at 10:19:55: 100 s of load end at 10:21:35, 5 s after the rollout
    # completed at 10:21:30, but the last old pod serves on 10 s (its preStop wait) after that.
    short = {**RAW["rollout"], "result": load(1000, first_answer=T0 + 1195, seconds=100.0)}
    row = _rows(_with(rollout=short))["infer.rollout"]
    assert row["verdict"] == "fail" and row["reason"] == "the load ended 5 s before the last old pod stopped"
    covered = {**RAW["rollout"], "result": load(1000, first_answer=T0 + 1195, seconds=120.0)}
    assert _rows(_with(rollout=covered))["infer.rollout"]["verdict"] == "pass"


def test_the_rollout_is_covered_until_the_role_saw_the_last_old_pod_stop() -> None:
    # The role saw the last old pod gone at 10:21:50, 20 s after the rollout completed (a slow
    # shutdown after its preStop wait): a load to 10:21:45 missed 5 s of it, one to 10:21:52 none.
    long_stop = {**RAW["rollout"], "old_stopped": "2026-12-04T10:21:50"}
    short = {**long_stop, "result": load(1000, first_answer=T0 + 1195, seconds=110.0)}
    row = _rows(_with(rollout=short))["infer.rollout"]
    assert row["verdict"] == "fail" and row["reason"] == "the load ended 5 s before the last old pod stopped"
    covered = {**long_stop, "result": load(1000, first_answer=T0 + 1195, seconds=117.0)}
    assert _rows(_with(rollout=covered))["infer.rollout"]["verdict"] == "pass"


def test_a_load_the_role_ended_covered_the_rollout_whatever_the_clocks_say() -> None:
    # The role sends SIGTERM only once it saw the last old pod gone; the pod's clock, 0.5 s
    # behind the controller's, makes the load look as if it ended before: not a failure.
    long_stop = {**RAW["rollout"], "old_stopped": "2026-12-04T10:21:50"}
    signalled = {**load(1000, first_answer=T0 + 1195, seconds=114.5), "stopped_by": "signal"}
    assert _rows(_with(rollout={**long_stop, "result": signalled}))["infer.rollout"]["verdict"] == "pass"
    by_bound = {**signalled, "stopped_by": "seconds"}
    row = _rows(_with(rollout={**long_stop, "result": by_bound}))["infer.rollout"]
    assert (row["verdict"], row["reason"]) == ("fail", "the load ended 0.5 s before the last old pod stopped")


def test_without_a_training_team_the_isolation_row_is_skipped() -> None:
    row = _rows(_with(isolation={"skipped": "no training team"}))["infer.isolation"]
    assert (row["verdict"], row["reason"]) == ("skip", "no training team")
