# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The cost inputs an inventory holds, read from host and site variables (pure, stdlib only):
each pool's price per GPU-hour (`gpurack_pool.cost`), its GPUs (hosts x
`gpurack_expect.gpu.count`), and the site's monthly costs:

```yaml
gpurack_site_costs:          # group_vars/all/cost.yml, per month, in one currency
  currency: EUR
  network: 1200
  storage: 800
  support: 2000
  operations: 3000
```

The driver (`gpurack cost`) and the acceptance role read them through these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import validate_expect
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.model import (
    SITE_COSTS,
    CostError,
    amount,
)

SITE_VARIABLE = "gpurack_site_costs"


def _number(value: object, where: str) -> float:
    number = amount(value)
    if number is None:
        raise CostError(f"{where} must be a finite number of at least 0, got {value!r}")
    return number


def site_costs(values: object) -> tuple[dict[str, float], str]:
    """The monthly site costs and their currency from `gpurack_site_costs` (absent: none).

    Raises:
        CostError: not a mapping, an unknown key, or a value that is not a non-negative number.
    """
    if values is None:
        return {}, ""
    if not isinstance(values, Mapping):
        raise CostError(f"{SITE_VARIABLE} must be a mapping of {', '.join(SITE_COSTS)} per month")
    unknown = sorted(set(values) - {*SITE_COSTS, "currency"})
    if unknown:
        raise CostError(f"{SITE_VARIABLE}: unknown key(s) {', '.join(map(str, unknown))}")
    monthly = {
        name: _number(values[name], f"{SITE_VARIABLE}.{name}") for name in SITE_COSTS if name in values
    }
    currency = values.get("currency")
    if currency is not None and not isinstance(currency, str):
        raise CostError(f"{SITE_VARIABLE}.currency must be text (such as EUR), got {currency!r}")
    return monthly, currency or ""


def pools_from_hosts(hosts: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, int], dict[str, float]]:
    """GPUs and the price per GPU-hour of each pool, from its hosts' variables.

    Raises:
        CostError: a pool without `cost.gpu_hour`, or two hosts of a pool with other prices.
    """
    capacity: dict[str, int] = {}
    prices: dict[str, float] = {}
    for host, values in sorted(hosts.items()):
        pool = values.get("gpurack_pool")
        if not isinstance(pool, Mapping) or not pool.get("name"):
            continue
        name = str(pool["name"])
        expect = values.get("gpurack_expect")
        problems = validate_expect(expect)
        if problems:
            raise CostError(f"host {host}: {problems[0]}")
        gpus = ((expect or {}).get("gpu") or {}).get("count", 0)
        capacity[name] = capacity.get(name, 0) + gpus
        cost = pool.get("cost")
        if not isinstance(cost, Mapping) or "gpu_hour" not in cost:
            raise CostError(f"pool {name} ({host}): no gpurack_pool.cost.gpu_hour to price its GPU-hours")
        price = _number(cost["gpu_hour"], f"pool {name} ({host}): gpurack_pool.cost.gpu_hour")
        if prices.setdefault(name, price) != price:
            raise CostError(
                f"pool {name}: its hosts give two prices per GPU-hour ({prices[name]} and {price})"
            )
    return capacity, prices
