# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""A team's inference services (gpurack_teams[].inference): the runtimes gpurack knows, each
entry checked into an InferenceService, and the site-wide rules (the service's pool serves
inference, the team has quota there for its most replicas, inference quota is never lent)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import unknown_key_errors
from ansible_collections.gpurack.bootstrap.plugins.module_utils.names import dns_label_error
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import quantity
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import (
    InferenceService,
    ModelCacheConfig,
    Resources,
    Site,
    Team,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.quantity import QuantityError

SERVICE_KEYS = (
    "name",
    "pool",
    "model",
    "runtime",
    "image",
    "replicas",
    "scale",
    "latency_p99_ms",
    "resources",
    "startup_timeout_s",
    "args",
)
INFERENCE_WORKLOAD = "inference"
# The flags of the runtime's command line that gpurack sets (the model's cached folder, its name,
# the address): a service's `args` may not set them. The launcher in the image refuses them too
# (workloads/serving/gpurack_serving/launch.py, OWNED_FLAGS; a unit test keeps the two equal).
OWNED_FLAGS = ("--model", "--served-model-name", "--host", "--port")
# Where an inference pool's nodes keep models when gpurack_pool.model_cache names no path: on the
# node's NVMe scratch when its inventory names scratch devices, else under /var/lib.
MODEL_CACHE_DIR = "gpurack-model-cache"
DEFAULT_MODEL_CACHE_PATH = "/var/lib/gpurack/model-cache"
DEFAULT_MODEL_CACHE_SIZE = "100Gi"
# nvme_scratch_mountpoint's default (roles/nvme_scratch/defaults/main.yml; a test keeps them equal).
NVME_SCRATCH_MOUNTPOINT = "/raid"


@dataclass(frozen=True)
class Runtime:
    """A serving runtime: its default image, port, paths, and the metric names it serves."""

    image: str
    port: int
    health_path: str
    # scale metric (gpurack's name) -> the runtime's own Prometheus gauge, as it is
    metrics: Mapping[str, str]
    # scale metric -> a counter of the runtime's, served as its per-second rate over a minute
    rates: Mapping[str, str] = field(default_factory=dict)
    # /dev/shm in memory, at most this much: a container's default 64 MiB is too little for
    # vLLM's ring buffer between its API server and its engine (160 MiB).
    shm_size: str = "512Mi"


# The images are built locally (no registry); a service may name another with `image`. Only
# runtimes whose metrics were read from a running server are here (docs/inference.md).
RUNTIMES: Mapping[str, Runtime] = {
    "vllm": Runtime(
        image="registry.gpurack.lab/gpurack-serving:0.1.2",
        port=8000,
        health_path="/health",
        metrics={
            "requests_running": "vllm:num_requests_running",
            "requests_waiting": "vllm:num_requests_waiting",
        },
        # vLLM samples its gauges at the end of an engine step: an embedding request is scheduled
        # and done within one step, so the two above read 0 under any load (seen in the lab at
        # 33 requests/s). The seconds of request latency per second are the mean number of
        # requests in flight over the minute (Little's law), whatever the model.
        rates={"requests_in_flight": "vllm:e2e_request_latency_seconds_sum"},
    ),
}
# How long a replica may take to start (download and load the model) before it is restarted:
# long, because a large model's first start is slow (kserve#3795 killed one after 5 minutes).
DEFAULT_STARTUP_TIMEOUT_S = 1800
# What an HPA scales on unless a service says: the mean requests in flight per replica, which every
# runtime here serves whatever its model (Runtime.rates).
DEFAULT_SCALE_METRIC = "requests_in_flight"
# The HPA's scale-down stabilization window: Kubernetes' default, and its API's own maximum.
DEFAULT_SCALE_DOWN_S = 300
MAX_SCALE_DOWN_S = 3600


def services_from(where: str, raw: object, team: str, errors: list[str]) -> tuple[InferenceService, ...]:
    """The team's services from gpurack_teams[].inference (absent: none); problems go to `errors`."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        errors.append(f"{where}: inference must be a list of services, got {type(raw).__name__}")
        return ()
    services: list[InferenceService] = []
    for index, entry in enumerate(raw):
        service = _service(f"{where}: inference[{index}]", entry, team, errors)
        if service is not None:
            services.append(service)
    names = [s.name for s in services]
    for name in sorted({n for n in names if names.count(n) > 1}):
        errors.append(f"{where}: inference: duplicate service name {name!r}")
    return tuple(services)


def _service(where: str, entry: object, team: str, errors: list[str]) -> InferenceService | None:
    if not isinstance(entry, Mapping):
        errors.append(f"{where} must be a mapping with name, pool, model and runtime")
        return None
    found: list[str] = []
    name = entry.get("name")
    if isinstance(name, str) and name:
        where = f"{where} ({name})"
    found.extend(unknown_key_errors(where, entry, SERVICE_KEYS))
    if err := dns_label_error(f"{where}: name", name, "embed"):
        found.append(err)
    elif not str(name)[0].isalpha():
        found.append(f"{where}: name {name!r} must start with a letter (it names a Service)")
    pool = entry.get("pool")
    if not isinstance(pool, str) or not pool:
        found.append(f"{where}: pool must name the inference pool it serves on")
    model = _model(where, entry.get("model"), team, found)
    runtime_name = entry.get("runtime", "vllm")
    runtime = RUNTIMES.get(str(runtime_name))
    if runtime is None:
        found.append(f"{where}: runtime must be one of {', '.join(RUNTIMES)}, got {runtime_name!r}")
    image = entry.get("image", runtime.image if runtime else "")
    if not isinstance(image, str) or not image:
        found.append(f"{where}: image must be an image reference, got {image!r}")
    low, high = _replicas(where, entry.get("replicas", {"min": 1, "max": 1}), found)
    metric, target, down = _scale(where, entry.get("scale"), runtime, found)
    latency = _positive(where, "latency_p99_ms", entry.get("latency_p99_ms", 1000), found)
    startup_raw = entry.get("startup_timeout_s", DEFAULT_STARTUP_TIMEOUT_S)
    startup = _positive(where, "startup_timeout_s", startup_raw, found)
    resources = _per_replica(where, entry.get("resources", {}), found)
    args = _args(where, entry.get("args", []), found)
    errors.extend(found)
    if found or runtime is None or resources is None:
        return None
    return InferenceService(
        name=str(name),
        pool=str(pool),
        model=model,
        runtime=str(runtime_name),
        image=str(image),
        min_replicas=low,
        max_replicas=high,
        scale_metric=metric,
        scale_target=target,
        scale_down_s=down,
        latency_p99_ms=latency,
        startup_timeout_s=startup,
        resources=resources,
        args=args,
    )


def _args(where: str, raw: object, errors: list[str]) -> tuple[str, ...]:
    """The runtime's own flags (e.g. vLLM's `--runner pooling`), none that gpurack sets."""
    if not isinstance(raw, list) or not all(isinstance(a, str) for a in raw):
        errors.append(f"{where}: args must be a list of strings (the runtime's flags), got {raw!r}")
        return ()
    owned = sorted({a.split("=", 1)[0] for a in raw} & set(OWNED_FLAGS))
    if owned:
        errors.append(f"{where}: args may not set {', '.join(owned)}: gpurack sets them")
    return tuple(raw)


def model_cache_from(
    where: str, pool: Mapping[str, object], scratch: str | None
) -> tuple[ModelCacheConfig | None, list[str]]:
    """An inference pool's model cache (gpurack_pool.model_cache: path, size), with the defaults;
    None for another pool, which may not set one. `scratch` is the host's NVMe scratch mount
    point when its inventory names scratch devices."""
    raw = pool.get("model_cache")
    if pool.get("workload") != INFERENCE_WORKLOAD:
        return None, (
            [f"{where}: model_cache: only an inference pool keeps models"] if raw is not None else []
        )
    raw = {} if raw is None else raw
    if not isinstance(raw, Mapping):
        return None, [f"{where}: model_cache must be a mapping {{path, size}}, got {raw!r}"]
    errors = unknown_key_errors(f"{where}: model_cache", raw, ("path", "size"))
    default = f"{scratch.rstrip('/')}/{MODEL_CACHE_DIR}" if scratch else DEFAULT_MODEL_CACHE_PATH
    path = raw.get("path", default)
    if (
        not isinstance(path, str)
        or not path.startswith("/")
        or ".." in path.split("/")
        or path.strip("/") == ""
    ):
        errors.append(f"{where}: model_cache.path must be an absolute folder path other than /, got {path!r}")
    try:
        size = quantity.parse(raw.get("size", DEFAULT_MODEL_CACHE_SIZE)).value
    except QuantityError as exc:
        errors.append(f"{where}: model_cache.size: {exc}")
        size = Fraction(0)
    if size < 1 or size.denominator != 1:
        errors.append(f"{where}: model_cache.size must be a whole number of bytes of 1 or more, like 100Gi")
    if errors:
        return None, errors
    return ModelCacheConfig(path=str(path).rstrip("/"), size_bytes=int(size)), []


def _model(where: str, raw: object, team: str, errors: list[str]) -> str:
    """An s3:// URI in the team's own bucket (named after the team), never another team's."""
    prefix = f"s3://{team}/"
    if not isinstance(raw, str) or not raw.startswith(prefix) or len(raw) == len(prefix):
        errors.append(f"{where}: model must be an s3:// URI in the team's bucket ({prefix}...), got {raw!r}")
        return ""
    return raw


def _replicas(where: str, raw: object, errors: list[str]) -> tuple[int, int]:
    if not isinstance(raw, Mapping):
        errors.append(f"{where}: replicas must be a mapping {{min, max}}, got {raw!r}")
        return 1, 1
    errors.extend(unknown_key_errors(f"{where}: replicas", raw, ("min", "max")))
    low, high = raw.get("min", 1), raw.get("max", raw.get("min", 1))
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)) or not 1 <= low <= high:
        errors.append(f"{where}: replicas needs 1 <= min <= max, got min {low!r} and max {high!r}")
        return 1, 1
    return low, high


def _scale(where: str, raw: object, runtime: Runtime | None, errors: list[str]) -> tuple[str, int, int]:
    """The HPA's metric (one the runtime serves), its per-replica target and its scale-down wait."""
    raw = raw if raw is not None else {"metric": DEFAULT_SCALE_METRIC, "target": 4}
    if not isinstance(raw, Mapping):
        errors.append(f"{where}: scale must be a mapping {{metric, target, down_s}}, got {raw!r}")
        return "", 0, DEFAULT_SCALE_DOWN_S
    errors.extend(unknown_key_errors(f"{where}: scale", raw, ("metric", "target", "down_s")))
    metric = raw.get("metric", DEFAULT_SCALE_METRIC)
    if not isinstance(metric, str):
        errors.append(f"{where}: scale.metric must be a metric name, got {metric!r}")
        metric = ""
    elif runtime is not None and metric not in scale_metrics(runtime):
        known = ", ".join(scale_metrics(runtime))
        errors.append(f"{where}: scale.metric must be one the runtime serves ({known}), got {metric!r}")
    target = _positive(where, "scale.target", raw.get("target", 4), errors)
    down = raw.get("down_s", DEFAULT_SCALE_DOWN_S)
    if isinstance(down, bool) or not isinstance(down, int) or not 0 <= down <= MAX_SCALE_DOWN_S:
        errors.append(f"{where}: scale.down_s must be a whole number of seconds from 0 to 3600, got {down!r}")
        down = DEFAULT_SCALE_DOWN_S
    return str(metric), target, down


def _positive(where: str, key: str, raw: object, errors: list[str]) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        errors.append(f"{where}: {key} must be a whole number of 1 or more, got {raw!r}")
        return 1
    return raw


def _per_replica(where: str, raw: object, errors: list[str]) -> Resources | None:
    """What one replica asks for: 1 GPU, 1 CPU and 4Gi by default."""
    if not isinstance(raw, Mapping):
        errors.append(f"{where}: resources must be a mapping of gpus, cpu and memory, got {raw!r}")
        return None
    errors.extend(unknown_key_errors(f"{where}: resources", raw, ("gpus", "cpu", "memory")))
    gpus = raw.get("gpus", 1)
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 0:
        errors.append(f"{where}: resources.gpus must be a count of 0 or more, got {gpus!r}")
        return None
    try:
        cpu, memory = quantity.parse(raw.get("cpu", "1")), quantity.parse(raw.get("memory", "4Gi"))
    except QuantityError as exc:
        errors.append(f"{where}: resources: {exc}")
        return None
    return Resources(gpus=gpus, cpu=cpu, memory=memory)


def serving_errors(site: Site) -> list[str]:
    """Each service on a pool that does not serve inference or that its team has too little quota
    on for its most replicas, and each team lending an inference pool's quota."""
    workloads = {p.name: p.workload for p in site.pools}
    errors: list[str] = []
    for team in site.teams:
        errors.extend(_pool_errors(team, workloads))
        errors.extend(_lending_errors(team, workloads))
    return errors


def _pool_errors(team: Team, workloads: Mapping[str, str]) -> list[str]:
    """The services' pools, and the GPUs they need of each against the team's quota there."""
    errors: list[str] = []
    needed: dict[str, int] = {}
    for service in team.inference:
        where = f"team {team.name}: inference service {service.name}"
        workload = workloads.get(service.pool)
        if workload is None:
            errors.append(f"{where}: pool {service.pool!r} is not a pool ({', '.join(sorted(workloads))})")
        elif service.pool not in team.quota:
            errors.append(f"{where}: the team has no quota on pool {service.pool}")
        else:
            if workload != INFERENCE_WORKLOAD:
                errors.append(f"{where}: pool {service.pool} is a {workload} pool, not an inference pool")
            needed[service.pool] = needed.get(service.pool, 0) + pods_at_most(service) * (
                service.resources.gpus or 0
            )
    for pool, gpus in sorted(needed.items()):
        quota = team.quota[pool].gpus or 0
        if gpus > quota:
            errors.append(
                f"team {team.name}: its inference services need up to {gpus} GPUs of pool {pool} "
                f"(replicas.max + 1 during a rollout, times resources.gpus), its quota there is {quota}"
            )
    return errors


def _lending_errors(team: Team, workloads: Mapping[str, str]) -> list[str]:
    errors = []
    for pool in sorted(team.lending_limit):
        lent = team.lending_limit[pool]
        amounts = [Fraction(lent.gpus or 0), *(q.value for q in (lent.cpu, lent.memory) if q is not None)]
        if workloads.get(pool) == INFERENCE_WORKLOAD and any(amount > 0 for amount in amounts):
            errors.append(
                f"team {team.name}: lending_limit.{pool}: {pool} serves inference, whose quota is never lent"
            )
    return errors


def pods_at_most(service: InferenceService) -> int:
    """Its most replicas, and one more while a rollout starts a pod before it stops one."""
    return service.max_replicas + 1


def is_inference_pool(site: Site, pool: str) -> bool:
    return any(p.name == pool and p.workload == INFERENCE_WORKLOAD for p in site.pools)


def custom_metric_name(metric: str) -> str:
    """The custom metric of a runtime's `metric` (a key of Runtime.metrics), as prometheus-adapter
    serves it (metrics_adapter.py) and the HPAs read it."""
    return f"gpurack_inference_{metric}"


def scale_metrics(runtime: Runtime) -> tuple[str, ...]:
    """The metrics an HPA may scale a runtime's servers on: its gauges and its rates."""
    return (*runtime.metrics, *runtime.rates)


def scale_metric_name(service: InferenceService) -> str:
    """The custom metric the HPA reads (prometheus-adapter serves it from the runtime's own)."""
    return custom_metric_name(service.scale_metric)


def runtime_of(service: InferenceService) -> Runtime:
    return RUNTIMES[service.runtime]
