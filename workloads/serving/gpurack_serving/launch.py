"""Start a model server: the model from the node-local cache, then exec the runtime on it.

Settings come from the environment the Deployment sets (docs/inference.md, "The runtime"):
GPURACK_MODEL_URI, GPURACK_MODEL_CACHE, GPURACK_MODEL_CACHE_LIMIT (bytes), GPURACK_SERVED_NAME and
GPURACK_PORT; the arguments are the runtime's own (the inventory's `args`), appended to those
gpurack sets. Before the exec, one JSON line on stdout says what the cache did:

    {"gpurack": "model-cache", "hit": false, "download_s": 1.9, "bytes": 91000000, ...}
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpurack_serving.cache import Launch, ModelCache
from gpurack_serving.errors import InputError
from gpurack_serving.store import source_for

# Flags gpurack sets itself; the inventory's args may not set them again.
OWNED_FLAGS = ("--model", "--served-model-name", "--host", "--port")
# The image has no C++ compiler, which torch.compile's CPU backend needs: vLLM runs eagerly.
EAGER = "--enforce-eager"
# One model replica per server: its worker runs in the engine's process instead of a third Python
# process that imports torch and vLLM again (about 26 s of a lab start at 900m CPU). vLLM keeps
# a separate worker process for `uni` too unless VLLM_ENABLE_V1_MULTIPROCESSING is 0 (RUNTIME_ENV);
# the API server and its engine stay two processes either way (docs/inference.md).
IN_PROCESS_WORKER = ("--distributed-executor-backend", "uni")
# vLLM inspects a model's class in a fresh Python process (a full import) unless its cache holds
# the answer: kept in the node-local cache, only the first start of a runtime on a node pays it.
RUNTIME_CACHE = "runtime/vllm"
# A stopping server closes its clients' kept-alive connections while its preStop hook waits
# (gpurack_serving.drain), then finishes the requests in flight: vLLM aborts them unless
# --shutdown-timeout gives them time (its default, 0). 15 s fits in Kubernetes' default 30 s
# grace period after the 10 s preStop wait. The inventory's args may set another.
DRAIN_MIDDLEWARE = ("--middleware", "gpurack_serving.drain.DrainMiddleware")
SHUTDOWN_TIMEOUT = ("--shutdown-timeout", "15")
# vLLM's CPU build: a small KV cache (an embedding model needs little), no CPU pinning (a pod's
# CPUs are a cgroup quota, not cores it owns), the worker in the engine's process (see above), no
# network (the model is local), no telemetry.
RUNTIME_ENV = {
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "VLLM_CPU_OMP_THREADS_BIND": "nobind",
    "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
    "HF_HUB_OFFLINE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
}


@dataclass(frozen=True, slots=True)
class Settings:
    model_uri: str
    cache: Path
    cache_limit: int
    served_name: str
    port: int


def settings_from(env: Mapping[str, str]) -> Settings:
    """The launcher's settings.

    Raises:
        InputError: one is missing or malformed.
    """
    for name in ("GPURACK_MODEL_URI", "GPURACK_MODEL_CACHE"):
        if not env.get(name):
            raise InputError(f"{name} is not set")
    return Settings(
        model_uri=env["GPURACK_MODEL_URI"],
        cache=Path(env["GPURACK_MODEL_CACHE"]),
        cache_limit=_whole(env, "GPURACK_MODEL_CACHE_LIMIT", None),
        served_name=env.get("GPURACK_SERVED_NAME", "model"),
        port=_whole(env, "GPURACK_PORT", 8000),
    )


def _whole(env: Mapping[str, str], name: str, default: int | None) -> int:
    raw = env.get(name)
    if raw is None and default is not None:
        return default
    try:
        value = int(raw or "", 10)
    except ValueError:
        value = 0
    if value < 1:
        raise InputError(f"{name} must be a whole number of 1 or more, got {raw!r}")
    return value


def runtime_argv(settings: Settings, model_path: str, extra: Sequence[str]) -> list[str]:
    """vLLM's OpenAI-compatible server on the cached model (`python -m`: this distribution is
    vllm-cpu, and the `vllm` command looks for one named vllm).

    Raises:
        InputError: `extra` sets a flag gpurack owns.
    """
    owned = sorted({a.split("=", 1)[0] for a in extra if a.split("=", 1)[0] in OWNED_FLAGS})
    if owned:
        raise InputError(f"the runtime's args may not set {', '.join(owned)}: gpurack sets them")
    given = {a.split("=", 1)[0] for a in extra}
    return [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server",
        "--model", model_path, "--served-model-name", settings.served_name,
        "--host", "0.0.0.0", "--port", str(settings.port), *DRAIN_MIDDLEWARE,
        *([] if EAGER in given else [EAGER]),
        *([] if IN_PROCESS_WORKER[0] in given else IN_PROCESS_WORKER),
        *([] if SHUTDOWN_TIMEOUT[0] in given else SHUTDOWN_TIMEOUT), *extra,
    ]  # fmt: skip


def cache_event(launch: Launch, uri: str) -> str:
    fields = {
        "gpurack": "model-cache",
        "model": uri,
        "hit": launch.hit,
        "download_s": round(launch.download_s, 3),
        "bytes": launch.bytes,
        "evicted": list(launch.evicted),
        "used_bytes": launch.used_bytes,
        "limit_bytes": launch.limit_bytes,
        "t": round(time.time(), 3),
    }
    return json.dumps(fields, separators=(",", ":"))


def launch(env: Mapping[str, str], extra: Sequence[str]) -> None:
    """Fetch (or find) the model, print the cache's line, and become the runtime.

    Raises:
        ServingError: the settings, the model or the cache (see ModelCache.acquire).
    """
    settings = settings_from(env)
    cache = ModelCache(settings.cache, settings.cache_limit)
    held = cache.acquire(source_for(settings.model_uri))
    argv = runtime_argv(settings, held.path, extra)
    sys.stdout.write(cache_event(held, settings.model_uri) + "\n")
    sys.stdout.flush()
    runtime_cache = {"VLLM_CACHE_ROOT": os.fspath(settings.cache / RUNTIME_CACHE)}
    os.execve(sys.executable, argv, {**RUNTIME_ENV, **runtime_cache, **env})
