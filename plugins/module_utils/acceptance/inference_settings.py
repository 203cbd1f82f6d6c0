# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""`gpurack_inference_acceptance`: how hard `gpurack accept --inference` loads a service, the
API price it is compared with, and its thresholds.

```yaml
gpurack_inference_acceptance:       # group_vars/all/acceptance.yml; every key optional
  concurrency: [1, 8]               # the two load levels: requests in flight at once
  requests: 400                     # per level, at most ...
  seconds: 60                       # ... and at most this long
  rollout_s: 900                    # at most: a rollout's load (ended once the last old pod stopped)
  baseline_per_1000: 0.02           # an API's price for 1,000 requests (the site's currency)
  thresholds:                       # a row without its threshold passes on its figure alone
    cold_start_s: 300               # at most: pod created to its first good answer
    warm_start_s: 120               # at most
    p99_ms: 500                     # at most; default: the service's latency_p99_ms
    error_rate: 0                   # at most, under load
    rollout_failures: 0             # at most (the goal is none)
    scale_up_s: 300                 # at most: load started to every replica Ready
    scale_down_s: 300               # at most: load ended to the minimum again
    isolation_ratio: 1.5            # at most: p99 beside a training job over p99 alone
    cost_ratio: 1.0                 # at most: our cost per 1,000 requests over the API's
```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance.settings import (
    SettingsError,
    mapping_and_thresholds,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.model import amount

VARIABLE = "gpurack_inference_acceptance"
AT_MOST: Mapping[str, bool] = {
    "cold_start_s": True,
    "warm_start_s": True,
    "p99_ms": True,
    "error_rate": True,
    "rollout_failures": True,
    "scale_up_s": True,
    "scale_down_s": True,
    "isolation_ratio": True,
    "cost_ratio": True,
}
KEYS = ("concurrency", "requests", "seconds", "rollout_s", "baseline_per_1000", "thresholds")
DEFAULT_CONCURRENCY = (1, 8)
# What a run may cost at most, whatever the inventory says: a load level is bounded in count
# and time, so a typo cannot turn the acceptance test into a load test of the production pool.
MAX_REQUESTS = 100_000
MAX_SECONDS = 900.0
DEFAULTS = {"cold_start_s": None, "error_rate": 0.0, "rollout_failures": 0.0}


@dataclass(frozen=True)
class InferenceSettings:
    concurrency: tuple[int, int] = DEFAULT_CONCURRENCY
    requests: int = 400
    seconds: float = 60.0
    rollout_s: float = MAX_SECONDS  # the role ends the load sooner: once the last old pod stopped
    baseline_per_1000: Optional[float] = None  # noqa: UP045
    thresholds: Mapping[str, float] = field(default_factory=dict)
    latency_objective_ms: Optional[float] = None  # noqa: UP045

    @property
    def variable(self) -> str:
        return VARIABLE

    def at_most(self, name: str) -> bool:
        return AT_MOST[name]

    def threshold(self, name: str) -> Optional[float]:  # noqa: UP045
        """The threshold `name`: p99_ms defaults to the service's latency objective, error_rate
        and rollout_failures to 0 (no request may fail)."""
        if name in self.thresholds:
            return self.thresholds[name]
        if name == "p99_ms":
            return self.latency_objective_ms
        return DEFAULTS.get(name)


def _number(value: Any, where: str, positive: bool = False, most: float = float("inf")) -> float:
    number = amount(value, positive)
    if number is None or number > most:
        floor = "above 0" if positive else "at least 0"
        raise SettingsError(
            f"{VARIABLE}.{where} must be a finite number {floor} and at most {most:g}, got {value!r}"
        )
    return number


def _whole(value: Any, where: str, most: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise SettingsError(f"{VARIABLE}.{where} must be a whole number from 1 to {most}, got {value!r}")
    return value


def _concurrency(value: Any) -> tuple[int, int]:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise SettingsError(f"{VARIABLE}.concurrency must be two load levels, e.g. [1, 8], got {value!r}")
    low, high = (_whole(v, "concurrency", 256) for v in value)
    if low >= high:
        raise SettingsError(f"{VARIABLE}.concurrency must be a lower then a higher level, got {value!r}")
    return low, high


def read(value: Any, latency_objective_ms: Any = None) -> InferenceSettings:
    """Settings from the variable's value (None: every default) and the service's objective.

    Raises:
        SettingsError: not a mapping, an unknown key, or a value of the wrong kind or size.
    """
    objective = amount(latency_objective_ms, True) if latency_objective_ms is not None else None
    if value is None:
        return InferenceSettings(latency_objective_ms=objective)
    value, thresholds = mapping_and_thresholds(value, KEYS, AT_MOST, VARIABLE)
    price = value.get("baseline_per_1000")
    return InferenceSettings(
        concurrency=_concurrency(value.get("concurrency", list(DEFAULT_CONCURRENCY))),
        requests=_whole(value.get("requests", 400), "requests", MAX_REQUESTS),
        seconds=_number(value.get("seconds", 60), "seconds", positive=True, most=MAX_SECONDS),
        rollout_s=_number(value.get("rollout_s", MAX_SECONDS), "rollout_s", positive=True, most=MAX_SECONDS),
        baseline_per_1000=None if price is None else _number(price, "baseline_per_1000"),
        thresholds=thresholds,
        latency_objective_ms=objective,
    )
