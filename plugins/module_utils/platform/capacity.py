# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""GPU quotas against capacity, and the most a team can ever hold of a pool (nominal + borrowable)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform import quantity
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import Resources, Site, Team
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.quantity import Quantity


@dataclass(frozen=True)
class PoolCapacity:
    """A pool's GPUs, where that count came from, and the nominal GPU quota the teams ask of it."""

    pool: str
    gpus: int
    source: str
    hosts: int
    nominal: int
    teams: tuple[tuple[str, int], ...]  # (team, nominal GPUs) for each team that asks any

    def to_dict(self) -> dict[str, Any]:
        return {
            "pool": self.pool,
            "gpus": self.gpus,
            "source": self.source,
            "hosts": self.hosts,
            "nominal": self.nominal,
            "teams": dict(self.teams),
        }


def pool_capacity(site: Site) -> list[PoolCapacity]:
    """Each pool's capacity and asked quota, in pool order."""
    result = []
    for pool in site.pools:
        asks = tuple((t.name, _gpus(t, pool.name)) for t in site.teams if _gpus(t, pool.name))
        result.append(
            PoolCapacity(
                pool=pool.name,
                gpus=pool.gpus,
                source=pool.gpus_source,
                hosts=len(pool.hosts),
                nominal=sum(n for _team, n in asks),
                teams=asks,
            )
        )
    return result


def quota_errors(site: Site) -> list[str]:
    """One message per pool whose nominal GPU quotas add up to more than it has, naming teams and pool."""
    errors = []
    for cap in pool_capacity(site):
        if cap.nominal <= cap.gpus:
            continue
        if len(cap.teams) == 1:
            who = f"team {cap.teams[0][0]} asks"
        else:
            who = "teams " + ", ".join(f"{name} ({n})" for name, n in cap.teams) + " ask"
        errors.append(
            f"{who} {cap.nominal} GPUs of pool {cap.pool}, which has {cap.gpus} ({cap.source}); "
            "lower the quota or set gpurack_quota_overcommit: true"
        )
    return errors


def ceiling(site: Site, team: Team, pool: str) -> Resources:
    """The most `team` can hold of `pool`: its nominal quota plus what it may borrow in the cohort.

    What it may borrow is its borrowing limit, at most what the other teams can lend
    (their nominal quota, capped by their lending limit).
    """
    own = team.quota[pool]
    others = [t for t in site.teams if t is not team and pool in t.quota]
    borrowable = min(_limit_int(team.borrowing_limit, pool), sum(_lendable_int(t, pool) for t in others))
    gpus = (own.gpus or 0) + int(borrowable)
    cpu, memory = (_add(getattr(own, key), _borrowable(team, others, pool, key)) for key in ("cpu", "memory"))
    return Resources(gpus=gpus, cpu=cpu, memory=memory)


def _gpus(team: Team, pool: str) -> int:
    quota = team.quota.get(pool)
    return 0 if quota is None or quota.gpus is None else quota.gpus


def _limit_int(limits: Mapping[str, Resources], pool: str) -> float:
    limit = limits.get(pool)
    return float("inf") if limit is None or limit.gpus is None else limit.gpus


def _lendable_int(team: Team, pool: str) -> int:
    nominal = _gpus(team, pool)
    limit = team.lending_limit.get(pool)
    return nominal if limit is None or limit.gpus is None else min(nominal, limit.gpus)


def _borrowable(team: Team, others: list[Team], pool: str, key: str) -> Quantity:
    lendable = quantity.total([_lendable(t, pool, key) for t in others])
    limit = team.borrowing_limit.get(pool)
    cap = None if limit is None else getattr(limit, key)
    return lendable if cap is None or cap.value >= lendable.value else cap


def _lendable(team: Team, pool: str, key: str) -> Quantity:
    nominal: Quantity = getattr(team.quota[pool], key)
    limit = team.lending_limit.get(pool)
    lent = None if limit is None else getattr(limit, key)
    return nominal if lent is None or lent.value >= nominal.value else lent


def _add(first: Quantity, second: Quantity) -> Quantity:
    return first + second
