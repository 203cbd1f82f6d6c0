"""Inference services on the lab's shared cluster (docs/platform.md, "Inference services";
docs/inference.md): applied through platform.yml, a real vLLM server (the gpurack-serving image)
accepted by `gpurack accept --inference` (cold and warm start through the node's cache, latency
under a real load tool, a rollout under load, the HPA on vLLM's own metric through
prometheus-adapter, the load beside a training job, the cost), scraped by Prometheus, refused
before any change, removed with the inventory entry. Called by test_lab_platform_e2e.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpurack import cli
from gpurack.errors import ExitCode
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from lab_helpers import gone_or_going, json_run, ssh, wait

IMAGES = Path(__file__).resolve().parents[1] / "images"
BUILD_IMAGE = IMAGES / "build-serving-image.sh"
BUILD_LOADGEN = IMAGES / "build-loadgen-image.sh"
BUILD_TRAINER = IMAGES / "build-trainer-image.sh"
SERVING_NODE = "lab-w1"  # lab-h200x1, the lab's inference pool
# The load tool may run on any worker; the isolation row's training job on either H100 node (an
# image a node already holds is not imported again).
WORKERS = ["lab-w1", "lab-w2", "lab-w3"]
H100_NODES = ["lab-w2", "lab-w3"]
SELECTOR = "gpurack.io/inference-service=embed"
# The team's cache folder on the node: the pool's model_cache (on /raid, the lab's NVMe scratch).
CACHE = "/raid/gpurack-model-cache/beta"
# beta's service of lab/inventory/group_vars/all/serving.yml (`-e lab_serving=true`).
SERVING_VARS = Path(__file__).resolve().parents[1] / "inventory" / "group_vars" / "all" / "serving.yml"
EMBED = yaml.safe_load(SERVING_VARS.read_text())["lab_embed_service"]
ROWS = ("infer.cold_start", "infer.warm_start", "infer.load.c1", "infer.load.c8", "infer.rollout",
        "infer.autoscale", "infer.isolation", "infer.cost")  # fmt: skip


def assert_inference_service_applied_refused_and_removed(
    inventory: str, teams: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> dict[str, float]:
    """beta's service (`lab_serving=true`) lands as a Deployment (its vLLM pod admitted under Pod
    Security "restricted" on the inference pool's node), Service, PodDisruptionBudget and HPA;
    `gpurack accept --inference` passes its eight rows (a cold start that downloads the model into
    the node's cache, a warm start that finds it there, two load levels, a rollout that fails no
    request, the HPA up and down, the load beside a training job, the cost); Prometheus scrapes the
    server; alpha's service, on a pool it has no quota for, is refused before any change; taken out
    of the inventory, beta's is deleted. Returns the rows' figures."""
    for script, hosts in (
        (BUILD_IMAGE, [SERVING_NODE]),
        (BUILD_LOADGEN, WORKERS),
        (BUILD_TRAINER, H100_NODES),
    ):
        built = subprocess.run([str(script)], capture_output=True, text=True, check=False, timeout=1800)
        assert built.returncode == 0, built.stderr[-2000:]
        archive = built.stdout.strip().splitlines()[-1]
        assert cli.main(["lab", "load-image", archive, *(a for h in hosts for a in ("--host", h))]) == 0
    serving = ["-e", "lab_serving=true"]
    argv = ["run", "platform", "-i", inventory, "-t", "inference"]
    code, applied = json_run([*argv, *serving], capsys)
    assert code == 0, applied
    apps = client.AppsV1Api()
    deployment = apps.read_namespaced_deployment("embed", "beta")
    assert deployment.spec.template.spec.priority_class_name == "gpurack-inference"
    budget = client.PolicyV1Api().read_namespaced_pod_disruption_budget("embed", "beta")
    assert budget.spec.max_unavailable == 1
    hpa = client.AutoscalingV2Api().read_namespaced_horizontal_pod_autoscaler("embed", "beta")
    assert (hpa.spec.min_replicas, hpa.spec.max_replicas) == (1, 2)
    assert client.CoreV1Api().read_namespaced_service("embed", "beta").spec.ports[0].port == 80

    code, accepted = json_run(["accept", "--inference", "-i", inventory, *serving], capsys)
    rows = {row["id"]: row for row in accepted["results"]}
    # The failure kinds too: a row that fails in CI must say what its requests met.
    seen = {
        i: (r["verdict"], r.get("reason"), (r.get("details") or {}).get("kinds")) for i, r in rows.items()
    }
    assert code == 0, seen
    assert {i: r["verdict"] for i, r in rows.items()} == dict.fromkeys(ROWS, "pass")
    cold, warm = rows["infer.cold_start"]["details"], rows["infer.warm_start"]["details"]
    assert cold["node"] == SERVING_NODE, "the service's pod must land on its inference pool's node"
    assert cold["cache_hit"] is False and cold["downloaded_bytes"] > 80_000_000, cold
    assert warm["cache_hit"] is True and warm["downloaded_bytes"] == 0, warm
    # Not one failed request: a kept-alive connection a stopping pod closed (or reset) unanswered
    # was sent again
    rollout = rows["infer.rollout"]
    assert rollout["measured"] == 0 and rollout["details"]["requests"] > 0, rollout
    assert rows["infer.autoscale"]["details"]["peak"] == 2
    # The lab's Prometheus found the pods (the scrape targets helper) and scrapes vLLM's own metrics.
    pod = client.CoreV1Api().list_namespaced_pod("beta", label_selector=SELECTOR).items[0].metadata.name
    _assert_scraped(pod)
    report = json.loads(ssh(SERVING_NODE, f"cat {CACHE}/report.json").stdout)
    assert report["limit_bytes"] == 512 * 2**20 and report["used_bytes"] == cold["model_bytes"], report
    assert [m["in_use"] for m in report["models"]] == [True], report
    figures = _figures(rows)

    alpha = next(t for t in teams if t["name"] == "alpha")
    alpha["inference"] = [{**EMBED, "model": "s3://alpha/models/all-MiniLM-L6-v2/"}]
    code, refused = json_run([*argv, "-e", json.dumps({"gpurack_teams": teams})], capsys)
    assert code == ExitCode.FAILED, refused
    assert [h["host"] for h in refused["hosts"] if h["changed"]] == [], refused
    with pytest.raises(ApiException) as missing:
        apps.read_namespaced_deployment("embed", "alpha")
    assert missing.value.status == 404

    code, removed = json_run(argv, capsys)
    assert code == 0, removed
    assert gone_or_going(lambda: dict(apps.read_namespaced_deployment("embed", "beta").metadata.to_dict()))
    with pytest.raises(ApiException) as deleted:
        client.AutoscalingV2Api().read_namespaced_horizontal_pod_autoscaler("embed", "beta")
    assert deleted.value.status == 404
    return figures


def _figures(rows: dict[str, dict[str, Any]]) -> dict[str, float]:
    """The rows' figures, printed with the platform figures at the test's end (a print here would
    be read as the next `--json` run's output)."""
    figures: dict[str, float] = {}
    for start in ("cold", "warm"):
        row = rows[f"infer.{start}_start"]
        figures[f"{start} start, created to first answer (s)"] = row["measured"]
        figures.update({f"{start} {k}": v for k, v in row["details"].items() if k.endswith("_s")})
    for row_id, row in rows.items():
        if row_id.startswith("infer.load."):
            figures.update(
                {f"{row_id} {k}": row["details"][k] for k in ("p50_ms", "p95_ms", "p99_ms", "rps")}
            )
    figures["rollout (s)"] = rows["infer.rollout"]["details"]["rollout_s"]
    figures["rollout requests sent again"] = rows["infer.rollout"]["details"]["retried"]
    figures.update({f"autoscale {k}": rows["infer.autoscale"]["details"][k] for k in ("up_s", "down_s")})
    figures["isolation p99 ratio"] = rows["infer.isolation"]["measured"]
    figures["cost per 1,000 requests (EUR)"] = rows["infer.cost"]["measured"]
    return figures


PROMQL = """
import json, sys, urllib.parse, urllib.request
query = urllib.parse.urlencode({"query": sys.argv[1]})
print(json.dumps(json.load(urllib.request.urlopen("http://127.0.0.1:9090/api/v1/query?" + query))))
"""


def _assert_scraped(pod: str) -> None:
    """vLLM's request counter for `pod`, in Prometheus on the control plane (job inference)."""
    query = f'vllm:e2e_request_latency_seconds_count{{job="inference",service="embed",pod="{pod}"}}'

    def counted() -> Any:
        answer = ssh("lab-cp1", f"python3 -c '{PROMQL}' '{query}'")
        result = json.loads(answer.stdout or "{}").get("data", {}).get("result", [])
        return [r for r in result if float(r["value"][1]) >= 1]

    (series,) = wait(f"Prometheus to scrape {pod}'s vLLM metrics", counted, timeout_s=120, every_s=5)
    assert series["metric"]["namespace"] == "beta" and series["metric"]["node"] == SERVING_NODE, series
