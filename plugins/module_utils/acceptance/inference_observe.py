# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What `gpurack accept --inference` saw, read out of what its role gathered: each start of the
service's server split into its phases, the load tool's summaries, the rollout and the scaling
moments. Pure: the rows (`inference_table`) judge it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Optional

from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.observe import (
    api_time,
    true_condition,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import PRESTOP_S

# The launcher's one line about the model cache (workloads/serving: gpurack_serving.launch).
CACHE_LINE = '{"gpurack":"model-cache"'


@dataclass(frozen=True)
class Start:
    """One start of a server pod, created to its first good answer, in seconds per phase."""

    what: str
    pod: str
    node: str
    phases: Mapping[str, float]
    total_s: float
    cache: Mapping[str, Any]


def _seconds(later: Optional[datetime], earlier: Optional[datetime]) -> Optional[float]:  # noqa: UP045
    if later is None or earlier is None:
        return None
    return round((later - earlier).total_seconds(), 3)


def cache_line(log: str) -> dict[str, Any]:
    """The launcher's model-cache line in a server's log ({} when it printed none)."""
    for line in (log or "").splitlines():
        if line.startswith(CACHE_LINE):
            try:
                found = json.loads(line)
            except ValueError:
                return {}
            return found if isinstance(found, dict) else {}
    return {}


def start_of(entry: Mapping[str, Any]) -> Optional[Start]:  # noqa: UP045
    """A start from the pod, its log and the first good answer's time (epoch seconds, as the
    load tool saw it); None when the pod never got Ready or never answered."""
    pod = entry.get("pod") or {}
    status = pod.get("status") or {}
    created = api_time((pod.get("metadata") or {}).get("creationTimestamp"))
    scheduled = api_time((true_condition(pod, "PodScheduled") or {}).get("lastTransitionTime"))
    ready = api_time((true_condition(pod, "Ready") or {}).get("lastTransitionTime"))
    running = ((status.get("containerStatuses") or [{}])[0].get("state") or {}).get("running") or {}
    started = api_time(running.get("startedAt"))
    answered = entry.get("first_answer")
    cache = cache_line(str(entry.get("log") or ""))
    if created is None or ready is None or not isinstance(answered, (int, float)) or not cache:
        return None
    first = datetime.fromtimestamp(float(answered), tz=UTC)
    launched = datetime.fromtimestamp(float(cache.get("t") or 0.0), tz=UTC)
    download = float(cache.get("download_s") or 0.0)
    phases = {
        "scheduling_s": _seconds(scheduled, created),
        "container_start_s": _seconds(started, scheduled),
        "download_s": round(download, 3),
        # the launcher prints its line once the model is in the cache; vLLM loads it from there
        "model_load_s": _seconds(ready, launched),
        "first_answer_s": max(_seconds(first, ready) or 0.0, 0.0),
    }
    return Start(
        what=str(entry.get("what") or "start"),
        pod=str((pod.get("metadata") or {}).get("name") or ""),
        node=str((pod.get("spec") or {}).get("nodeName") or ""),
        phases={k: v for k, v in phases.items() if v is not None},
        total_s=_seconds(max(first, ready), created) or 0.0,
        cache=cache,
    )


@dataclass(frozen=True)
class Scaling:
    """The HPA's run: load started, every replica Ready, load ended, back to the minimum."""

    low: int
    high: int
    peak: int
    up_s: Optional[float]  # noqa: UP045
    down_s: Optional[float]  # noqa: UP045


def scaling_of(raw: Mapping[str, Any]) -> Scaling:
    """The scaling moments the role noted (ISO times; empty: not reached)."""
    return Scaling(
        low=int(raw.get("min") or 1),
        high=int(raw.get("max") or 1),
        peak=int(raw.get("peak") or 0),
        up_s=_seconds(api_time(raw.get("at_max")), api_time(raw.get("load_started"))),
        down_s=_seconds(api_time(raw.get("at_min")), api_time(raw.get("load_ended"))),
    )


def _uncovered(rollout: Mapping[str, Any], load: Mapping[str, Any]) -> Optional[float]:  # noqa: UP045
    """How long after the load's end the rollout's last old pod was still stopping: when the role
    saw it gone (`old_stopped`), else the rollout's end plus the preStop wait; <= 0 when the load
    covered it all, None when unknown. A load the role ended (SIGTERM, `stopped_by: signal`)
    covered it: the role signals only once the last old pod is gone, so its times, from two
    machines' clocks, are not compared."""
    if load.get("stopped_by") == "signal":
        return 0.0
    complete = api_time(rollout.get("complete"))
    stopped = api_time(rollout.get("old_stopped"))
    if stopped is None and complete is not None:
        stopped = complete + timedelta(seconds=PRESTOP_S)
    first, seconds = load.get("first_answer"), load.get("seconds")
    if stopped is None or not isinstance(first, (int, float)) or not isinstance(seconds, (int, float)):
        return None
    ended = datetime.fromtimestamp(float(first) + float(seconds), tz=UTC)
    return round((stopped - ended).total_seconds(), 3)


def _load(value: Any) -> dict[str, Any]:
    """A load tool summary: the mapping, or its one JSON line in a pod's log ({} if none)."""
    if isinstance(value, Mapping):
        return dict(value)
    for line in reversed(str(value or "").splitlines()):
        if line.startswith("{"):
            try:
                found = json.loads(line)
            except ValueError:
                continue
            if isinstance(found, dict) and "requests" in found:
                return found
    return {}


@dataclass(frozen=True)
class InferenceObserved:
    """Everything the inference rows are made of."""

    team: str
    service: str
    pool: str
    started: datetime
    finished: datetime
    gpus_per_replica: int
    starts: Sequence[Optional[Start]]  # noqa: UP045
    loads: Sequence[Mapping[str, Any]]
    rollout: Mapping[str, Any]
    rollout_s: Optional[float]  # noqa: UP045
    # seconds of the rollout the load did not cover: from its end to the last old pod's stop
    rollout_uncovered_s: Optional[float]  # noqa: UP045
    scaling: Scaling
    isolation: Mapping[str, Mapping[str, Any]]
    training_pods: int
    isolation_skipped: str
    gpu_hour: Optional[float]  # noqa: UP045
    monthly: Mapping[str, float] = field(default_factory=dict)
    currency: str = ""
    failure: str = ""

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> InferenceObserved:
        """Read the role's gathered mapping.

        Raises:
            KeyError, TypeError, ValueError: a malformed mapping.
        """
        started = api_time(raw["started"])
        finished = api_time(raw["finished"])
        if started is None or finished is None:
            raise ValueError("started and finished must be times")
        rollout = raw.get("rollout") or {}
        isolation = raw.get("isolation") or {}
        prices = raw.get("prices") or {}
        pool = str(raw.get("pool") or "")
        return cls(
            team=str(raw["team"]),
            service=str(raw["service"]),
            pool=pool,
            started=started,
            finished=max(finished, started),
            gpus_per_replica=int(raw.get("gpus_per_replica") or 0),
            starts=[start_of(s) for s in raw.get("starts") or []],
            loads=[_load(entry.get("result")) for entry in raw.get("loads") or []],
            rollout=_load(rollout.get("result")),
            rollout_s=_seconds(api_time(rollout.get("complete")), api_time(rollout.get("patched"))),
            rollout_uncovered_s=_uncovered(rollout, _load(rollout.get("result"))),
            scaling=scaling_of(raw.get("autoscale") or {}),
            isolation={k: _load(isolation.get(k)) for k in ("alone", "with_training")},
            training_pods=int(isolation.get("training_pods") or 0),
            isolation_skipped=str(isolation.get("skipped") or ""),
            gpu_hour=(prices.get("gpu_hour") or {}).get(pool),
            monthly=dict(prices.get("monthly") or {}),
            currency=str(prices.get("currency") or ""),
            failure=str(raw.get("failure") or ""),
        )

    def accepted_requests(self) -> int:
        """Requests answered well in every load the run made (the cost's accepted units)."""
        loads = [*self.loads, self.rollout, *self.isolation.values()]
        return sum(int(x.get("requests") or 0) - int(x.get("failures") or 0) for x in loads if x)
