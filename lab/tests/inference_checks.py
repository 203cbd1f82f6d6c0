"""Inference services on the lab's shared cluster (docs/platform.md, "Inference services";
docs/inference.md): applied through platform.yml, a real vLLM server (the gpurack-serving image)
that answers through its Service after a cold start that downloads the model into the node's
cache and a warm start that finds it there, refused before any change, removed with the
inventory entry. Called by test_lab_platform_e2e.py, on its cluster."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from gpurack import cli
from gpurack.errors import ExitCode
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.stream import stream
from lab_helpers import gone_or_going, json_run, ssh, wait

BUILD_IMAGE = Path(__file__).resolve().parents[1] / "images" / "build-serving-image.sh"
SERVING_NODE = "lab-w1"  # lab-h200x1, the lab's inference pool
SELECTOR = "gpurack.io/inference-service=embed"
# The team's cache folder on the node: the pool's model_cache (on /raid, the lab's NVMe scratch).
CACHE = "/raid/gpurack-model-cache/beta"
# MiniLM as an embedding model on vLLM's CPU build: the runtime's own flags.
EMBED_ARGS = ["--runner", "pooling", "--convert", "embed", "--max-model-len", "256", "--dtype", "float32"]
ASK = """
import json, urllib.request
body = json.dumps({"model": "embed", "input": ["the GPU rack is ready"]}).encode()
request = urllib.request.Request("http://embed/v1/embeddings", body, {"content-type": "application/json"})
answer = json.load(urllib.request.urlopen(request, timeout=60))
metrics = urllib.request.urlopen("http://127.0.0.1:8000/metrics", timeout=30).read().decode()
names = sorted({line.split("{")[0] for line in metrics.splitlines() if line.startswith("vllm:")})
print(json.dumps({"values": len(answer["data"][0]["embedding"]), "metrics": names}))
"""


def assert_inference_service_applied_refused_and_removed(
    inventory: str, teams: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> dict[str, float]:
    """beta's service lands as a Deployment (its vLLM pod admitted under Pod Security "restricted"
    on the inference pool's node), Service, PodDisruptionBudget and HPA; its cold start downloads
    the model into the node's cache, it answers through its Service, Prometheus scrapes it, and
    its warm start finds the model there; alpha's, on a pool it has no quota for, is refused
    before any change; taken out of the inventory, beta's is deleted. Returns the start times."""
    built = subprocess.run([str(BUILD_IMAGE)], capture_output=True, text=True, check=False, timeout=1800)
    assert built.returncode == 0, built.stderr[-2000:]
    assert cli.main(["lab", "load-image", built.stdout.strip().splitlines()[-1], "--host", SERVING_NODE]) == 0
    service = {
        "name": "embed",
        "pool": "lab-h200x1",
        "model": "s3://beta/models/all-MiniLM-L6-v2/",
        "args": EMBED_ARGS,
        "replicas": {"min": 1, "max": 1},
        # A lab node is a container of 2 CPUs and 4 GiB. The server's RSS is about 1 GiB, and the
        # page cache of the 2 GiB of libraries it maps counts against its limit too.
        "resources": {"gpus": 0, "cpu": "1", "memory": "2Gi"},
    }
    beta = next(t for t in teams if t["name"] == "beta")
    beta["inference"] = [service]
    argv = ["run", "platform", "-i", inventory, "-t", "inference"]
    # A cold start: nothing of an earlier run in the team's cache, before any pod can start.
    ssh(SERVING_NODE, f"rm -rf {CACHE}/models {CACHE}/locks {CACHE}/report.json")
    code, applied = json_run([*argv, "-e", json.dumps({"gpurack_teams": teams})], capsys)
    assert code == 0, applied
    apps, core = client.AppsV1Api(), client.CoreV1Api()
    deployment = apps.read_namespaced_deployment("embed", "beta")
    assert deployment.spec.template.spec.priority_class_name == "gpurack-inference"
    budget = client.PolicyV1Api().read_namespaced_pod_disruption_budget("embed", "beta")
    assert budget.spec.max_unavailable == 1
    hpa = client.AutoscalingV2Api().read_namespaced_horizontal_pod_autoscaler("embed", "beta")
    assert (hpa.spec.min_replicas, hpa.spec.max_replicas) == (1, 1)
    assert core.read_namespaced_service("embed", "beta").spec.ports[0].port == 80
    cold = _started("cold start")
    assert cold["node"] == SERVING_NODE, "the service's pod must land on its inference pool's node"
    assert cold["cache"]["hit"] is False and cold["cache"]["bytes"] > 80_000_000, cold
    # The lab's Prometheus found the pod (the scrape targets helper) and scrapes vLLM's own metrics.
    _assert_scraped(cold["pod"])
    # The same node again: the model is in its cache, nothing is downloaded.
    core.delete_namespaced_pod(cold["pod"], "beta", grace_period_seconds=5)
    warm = _started("warm start", after=cold["pod"])
    assert warm["cache"]["hit"] is True and warm["cache"]["download_s"] == 0, warm
    report = json.loads(ssh(SERVING_NODE, f"cat {CACHE}/report.json").stdout)
    assert report["limit_bytes"] == 512 * 2**20 and report["used_bytes"] == cold["cache"]["bytes"], report
    assert [m["in_use"] for m in report["models"]] == [True], report
    figures = {f"{start['what']} {k}": v for start in (cold, warm) for k, v in start["seconds"].items()}
    # Printed with the platform figures at the test's end (a print here would be read as the next
    # `--json` run's output).

    alpha = next(t for t in teams if t["name"] == "alpha")
    alpha["inference"] = [{**service, "model": "s3://alpha/models/all-MiniLM-L6-v2/"}]
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


def _started(what: str, after: str | None = None) -> dict[str, Any]:
    """Wait for embed's (next) pod to be Ready, ask it through its Service, and split its start:
    created to scheduled, the model from the cache (download), and the runtime's load to Ready."""
    core = client.CoreV1Api()

    def ready_pod() -> Any:
        for pod in core.list_namespaced_pod("beta", label_selector=SELECTOR).items:
            conditions = {c.type: c for c in pod.status.conditions or []}
            if (
                pod.metadata.name != after
                and conditions.get("Ready")
                and conditions["Ready"].status == "True"
            ):
                return pod, conditions
        return None

    pod, conditions = wait(f"embed's pod Ready ({what})", ready_pod, timeout_s=420, every_s=2)
    name = pod.metadata.name
    log = core.read_namespaced_pod_log(name, "beta")
    cache = json.loads(next(line for line in log.splitlines() if line.startswith('{"gpurack":"model-cache"')))
    answer = json.loads(
        stream(
            core.connect_get_namespaced_pod_exec,
            name,
            "beta",
            container="server",
            command=["python", "-c", ASK],
            stderr=True,
            stdin=False,
            stdout=True,
            tty=False,
        )
    )
    assert answer["values"] == 384, answer
    assert {"vllm:num_requests_running", "vllm:num_requests_waiting"} <= set(answer["metrics"]), answer
    created = pod.metadata.creation_timestamp
    scheduled = conditions["PodScheduled"].last_transition_time
    started = pod.status.container_statuses[0].state.running.started_at
    launched = datetime.fromtimestamp(cache["t"], tz=created.tzinfo)
    ready_at = conditions["Ready"].last_transition_time
    seconds = {
        "scheduling (s)": (scheduled - created).total_seconds(),
        "container start (s)": (started - scheduled).total_seconds(),
        "model download (s)": cache["download_s"],
        "cache to runtime ready (s)": round((ready_at - launched).total_seconds(), 1),
        "created to ready (s)": (ready_at - created).total_seconds(),
    }
    return {"what": what, "pod": name, "node": pod.spec.node_name, "cache": cache, "seconds": seconds}


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
