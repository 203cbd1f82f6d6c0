"""A fake cluster for the conformance tests: API paths answered from a table, every create kept,
pods finishing as told, Prometheus answered from a table (tests/unit/.../test_conformance*.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance import ApiError, Settings

GANG_PODS = "pods?labelSelector=job-name%3D"
ALL_DRA = ["deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices"]
HPA = {
    "metadata": {"name": "embed", "namespace": "beta"},
    "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "embed"},
             "metrics": [{"type": "Pods", "pods": {"metric": {"name": "requests_waiting"}}}]},
    "status": {"conditions": [{"type": "ScalingActive", "status": "True"}]},
}  # fmt: skip
DEPLOYMENT = {
    "spec": {"template": {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}
}


def settings(**overrides: Any) -> Settings:
    """Settings for a fast run: no waiting, a probe image set."""
    base: dict[str, Any] = {
        "namespace": "alpha", "queue": "alpha", "cluster_queue": "alpha", "run": "conformance-1",
        "probe_image": "probe:1", "timeout_s": 0.0, "hold_s": 0.0, "every_s": 0.0,
    }  # fmt: skip
    return Settings.from_mapping({**base, **overrides})


@dataclass
class FakeCluster:
    """A cluster where everything conformance tests works, until a test changes one answer."""

    paths: dict[str, Any] = field(default_factory=dict)
    running: dict[str, int] = field(default_factory=dict)  # job name part -> Running pods
    probe_logs: dict[str, str] = field(
        default_factory=lambda: {"none": "", "gpu": "/dev/nvidia0\n/dev/nvidiactl\n"}
    )
    probe_phase: str = "Succeeded"
    series: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    refuse_bad_queue: bool = True
    suspend_queued: bool = True
    fail_on: Callable[[str, str], ApiError | None] = lambda method, path: None
    created: list[tuple[str, dict[str, Any], bool]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        defaults: dict[str, Any] = {
            "/apis/resource.k8s.io/v1": {"resources": [{"name": n} for n in ALL_DRA]},
            "/apis/resource.k8s.io/v1/deviceclasses": {"items": [{"metadata": {"name": "gpu.example.com"}}]},
            "/api/v1/nodes": {"items": [{"metadata": {"name": "gpu1"},
                                         "status": {"allocatable": {"nvidia.com/gpu": "8"}}}]},
            "/apis/autoscaling/v2/horizontalpodautoscalers": {"items": [HPA]},
            "/apis/custom.metrics.k8s.io/v1beta1": {"resources": []},
            "/apis/apps/v1/namespaces/beta/deployments/embed": DEPLOYMENT,
        }  # fmt: skip
        self.paths = {**defaults, **self.paths}
        self.running = {"gang-fits": 2, "gang-unfit": 0, **self.running}
        self.series = {
            'up{job="inference"}': [{"metric": {"job": "inference", "namespace": "beta", "pod": "embed-0"},
                                     "value": [0, "1"]}],
            "DCGM_FI_DEV_GPU_UTIL": [{"metric": {"gpu": "0"}, "value": [0, "3"]}],
            "DCGM_FI_DEV_FB_USED": [{"metric": {"gpu": "0"}, "value": [0, "100"]}],
            **self.series,
        }  # fmt: skip

    def _check(self, method: str, path: str) -> None:
        error = self.fail_on(method, path)
        if error is not None:
            raise error

    def get(self, path: str) -> dict[str, Any] | None:
        self._check("GET", path)
        if GANG_PODS in path:
            job = path.split(GANG_PODS)[1]
            count = next((n for part, n in self.running.items() if job.endswith(part)), 0)
            return {"items": [{"status": {"phase": "Running"}}] * count}
        if "/resourceclaims/" in path:
            results = [{"driver": "gpu.example.com", "pool": "gpu1", "device": "gpu-0"}]
            return {"status": {"allocation": {"devices": {"results": results}}}}
        if "/localqueues/" in path:
            return {"status": {"conditions": [{"type": "Active", "status": "True"}]}}
        if "/pods/" in path:
            return {"status": {"phase": self.probe_phase}}
        return self.paths.get(path)

    def create(self, path: str, body: Mapping[str, Any], dry_run: bool = False) -> dict[str, Any]:
        self._check("POST", path)
        self.created.append((path, dict(body), dry_run))
        labels = (body.get("metadata") or {}).get("labels") or {}
        queue = labels.get("kueue.x-k8s.io/queue-name")
        if queue is not None and dry_run:
            if self.refuse_bad_queue and queue.lower() != queue:
                raise ApiError(403, 'admission webhook "vjob.kb.io" denied the request: queue name invalid')
            return {**body, "spec": {**body["spec"], "suspend": self.suspend_queued}}
        return dict(body)

    def delete(self, path: str) -> None:
        self.deleted.append(path)

    def log(self, path: str) -> str:
        return self.probe_logs["gpu" if "probe-gpu" in path else "none"]

    def query(self, promql: str) -> list[dict[str, Any]]:
        self._check("QUERY", promql)
        return self.series.get(promql, [])
