"""A hand-made inference acceptance run, as the inference_acceptance role gathers it: a cold and
a warm start, two loads, a rollout, the HPA up and down, a load beside training, the prices."""

from __future__ import annotations

import json
from typing import Any

# The run: 1 h; the pool's GPUs at 2.0 an hour, the site's monthly costs 730 (1 an hour).
START, END = "2026-12-04T10:00:00+00:00", "2026-12-04T11:00:00+00:00"


def pod(name: str, created: str, scheduled: str, started: str, ready: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": {"nodeName": "gpu-07"},
        "status": {
            "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": scheduled},
                {"type": "Ready", "status": "True", "lastTransitionTime": ready},
            ],
            "containerStatuses": [{"state": {"running": {"startedAt": started}}}],
        },
    }


def cache_line(hit: bool, download_s: float, t: float) -> str:
    line = {"gpurack": "model-cache", "hit": hit, "download_s": download_s, "bytes": 91_617_632}
    return json.dumps({**line, "t": t}, separators=(",", ":"))


# 2026-12-04T10:00:00Z is epoch 1_796_378_400.
T0 = 1_796_378_400.0


def load(requests: int, failures: int = 0, p99: float = 100.0, **extra: Any) -> dict[str, Any]:
    return {
        "tool": "locust",
        "requests": requests,
        "failures": failures,
        "p50_ms": p99 / 4,
        "p95_ms": p99 / 2,
        "p99_ms": p99,
        "rps": 20.0,
        "error_rate": failures / requests,
        **extra,
    }


RAW: dict[str, Any] = {
    "team": "beta",
    "service": "embed",
    "pool": "h200-inference",
    "started": START,
    "finished": END,
    "gpus_per_replica": 1,
    "starts": [
        {
            "what": "cold",
            # created 10:01:00, scheduled +1 s, container +2 s, launcher's line at +10 s (8 s of
            # download), Ready at +60 s, first answer 0.5 s later
            "pod": pod(
                "embed-a",
                "2026-12-04T10:01:00Z",
                "2026-12-04T10:01:01Z",
                "2026-12-04T10:01:03Z",
                "2026-12-04T10:02:00Z",
            ),
            "log": "noise\n" + cache_line(False, 8.0, T0 + 70),
            "first_answer": T0 + 120.5,
        },
        {
            "what": "warm",
            "pod": pod(
                "embed-b",
                "2026-12-04T10:05:00Z",
                "2026-12-04T10:05:00Z",
                "2026-12-04T10:05:01Z",
                "2026-12-04T10:05:40Z",
            ),
            "log": cache_line(True, 0.0, T0 + 302),
            "first_answer": T0 + 341.0,
        },
    ],
    "loads": [{"concurrency": 1, "result": load(300)}, {"concurrency": 8, "result": load(300, p99=400.0)}],
    "rollout": {"patched": "2026-12-04T10:20:00", "complete": "2026-12-04T10:21:30", "result": load(1000)},
    "autoscale": {
        "min": 1,
        "max": 2,
        "peak": 2,
        "load_started": "2026-12-04T10:30:00",
        "at_max": "2026-12-04T10:32:00",
        "load_ended": "2026-12-04T10:32:05",
        "at_min": "2026-12-04T10:33:00",
    },
    "isolation": {"with_training": load(300, p99=150.0), "training_pods": 1},
    "prices": {"gpu_hour": {"h200-inference": 2.0}, "monthly": {"support": 730.0}, "currency": "EUR"},
}
