# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""`gpurack_acceptance`: the acceptance job's shape, its thresholds and the baseline.

```yaml
gpurack_acceptance:                 # group_vars/all/acceptance.yml; every key optional
  window_s: 90                      # the fixed training window (total, across restarts)
  checkpoint_interval_steps: 10
  baseline: {kind: gpu_hour, price: 2.50}   # or {kind: unit, price: 0.004}: per accepted unit
  thresholds:                       # a row without its threshold passes on its figure alone
    queue_wait_s: 300               # at most
    staging_s: 120                  # at most
    busbw_gbps: 0.05                # at least
    samples_per_s: 5                # at least
    checkpoint_write_s: 60          # at most
    restore_s: 300                  # at most
    steps_lost: 10                  # at most; default: one checkpoint interval
    cost_ratio: 1.0                 # at most: our cost per accepted unit over the baseline's
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.model import Baseline, amount

VARIABLE = "gpurack_acceptance"
# Threshold name -> True when the figure must be at most the threshold, False: at least.
AT_MOST: Mapping[str, bool] = {
    "queue_wait_s": True,
    "staging_s": True,
    "busbw_gbps": False,
    "samples_per_s": False,
    "checkpoint_write_s": True,
    "restore_s": True,
    "steps_lost": True,
    "cost_ratio": True,
}
BASELINE_KINDS = ("gpu_hour", "unit")  # _cost.Baseline: GPU rental per GPU-hour, API per unit
DEFAULT_WINDOW_S = 90.0
DEFAULT_CHECKPOINT_INTERVAL_STEPS = 10
KEYS = ("window_s", "checkpoint_interval_steps", "baseline", "thresholds")


class SettingsError(ValueError):
    """`gpurack_acceptance` is malformed; the message names the key."""


@dataclass(frozen=True)
class Settings:
    window_s: float = DEFAULT_WINDOW_S
    checkpoint_interval_steps: int = DEFAULT_CHECKPOINT_INTERVAL_STEPS
    baseline: Baseline | None = None
    thresholds: Mapping[str, float] = field(default_factory=dict)

    @property
    def variable(self) -> str:
        return VARIABLE

    def at_most(self, name: str) -> bool:
        return AT_MOST[name]

    def threshold(self, name: str) -> float | None:
        """The threshold `name`; steps_lost defaults to one checkpoint interval."""
        if name == "steps_lost" and name not in self.thresholds:
            return float(self.checkpoint_interval_steps)
        return self.thresholds.get(name)


def _number(value: Any, where: str, positive: bool = False) -> float:
    number = amount(value, positive)
    if number is None:
        floor = "above 0" if positive else "at least 0"
        raise SettingsError(f"{VARIABLE}.{where} must be a finite number {floor}, got {value!r}")
    return number


def mapping_and_thresholds(
    value: Any, keys: Sequence[str], at_most: Mapping[str, bool], variable: str
) -> tuple[Mapping[str, Any], dict[str, float]]:
    """An acceptance variable's `value` as a mapping of only `keys`, and its `thresholds` (names of
    `at_most`, each a finite number of at least 0): what both acceptance tests read alike.

    Raises:
        SettingsError: not a mapping, an unknown key, or a threshold that is not a number.
    """
    if not isinstance(value, Mapping):
        raise SettingsError(f"{variable} must be a mapping of {', '.join(keys)}")
    _unknown(value, keys, variable)
    thresholds = value.get("thresholds") or {}
    if not isinstance(thresholds, Mapping):
        raise SettingsError(f"{variable}.thresholds must be a mapping of {', '.join(at_most)}")
    _unknown(thresholds, at_most, f"{variable}.thresholds")
    numbers = {}
    for name, given in thresholds.items():
        number = amount(given)
        if number is None:
            raise SettingsError(
                f"{variable}.thresholds.{name} must be a finite number at least 0, got {given!r}"
            )
        numbers[str(name)] = number
    return value, numbers


def _unknown(given: Mapping[str, Any], allowed: Any, where: str) -> None:
    extra = sorted(str(k) for k in given if k not in allowed)
    if extra:
        raise SettingsError(f"{where}: unknown key(s) {', '.join(extra)}; known: {', '.join(allowed)}")


def _baseline(value: Any) -> Baseline | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise SettingsError(f"{VARIABLE}.baseline must be a mapping {{kind: gpu_hour|unit, price: N}}")
    _unknown(value, ("kind", "price"), f"{VARIABLE}.baseline")
    kind = value.get("kind")
    if kind not in BASELINE_KINDS:
        raise SettingsError(
            f"{VARIABLE}.baseline.kind must be one of {', '.join(BASELINE_KINDS)}, got {kind!r}"
        )
    return Baseline(kind=kind, price=_number(value.get("price"), "baseline.price"))


def read(value: Any) -> Settings:
    """Settings from the variable's value (None: every default).

    Raises:
        SettingsError: not a mapping, an unknown key, or a value of the wrong kind.
    """
    if value is None:
        return Settings()
    value, thresholds = mapping_and_thresholds(value, KEYS, AT_MOST, VARIABLE)
    interval = value.get("checkpoint_interval_steps", DEFAULT_CHECKPOINT_INTERVAL_STEPS)
    if isinstance(interval, bool) or not isinstance(interval, int) or interval < 1:
        raise SettingsError(
            f"{VARIABLE}.checkpoint_interval_steps must be a whole number of at least 1, got {interval!r}"
        )
    return Settings(
        window_s=_number(value.get("window_s", DEFAULT_WINDOW_S), "window_s", positive=True),
        checkpoint_interval_steps=interval,
        baseline=_baseline(value.get("baseline")),
        thresholds=thresholds,
    )
