"""The cost inputs of an inventory file: each pool's GPUs and price per GPU-hour and the site's
monthly costs (the variables and their parsing: module_utils/cost/inputs.py), with the
driver's errors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost import (
    SITE_VARIABLE,
    CostError,
    Prices,
    pools_from_hosts,
    site_costs,
)

from gpurack.ansible_inventory import Inventory
from gpurack.errors import UsageError

HOST_KEYS = ("gpurack_pool", "gpurack_expect")


@dataclass(frozen=True, slots=True)
class CostInputs:
    """What the cost of a window needs from the inventory."""

    capacity: Mapping[str, int]
    prices: Prices
    currency: str


def read(inventory_path: Path) -> CostInputs:
    """The cost inputs of an inventory.

    Raises:
        UsageError: the inventory cannot be read, has no pool, or a price is malformed.
    """
    inventory = Inventory(inventory_path)
    hosts = {name: inventory.host_vars(name, HOST_KEYS) for name in inventory.hosts()}
    try:
        capacity, gpu_hour = pools_from_hosts(hosts)
        monthly, currency = site_costs(inventory.localhost_vars((SITE_VARIABLE,)).get(SITE_VARIABLE))
    except CostError as error:
        raise UsageError(f"{inventory_path}: {error}") from None
    if not capacity:
        raise UsageError(f"{inventory_path}: no host has a gpurack_pool; nothing to cost")
    return CostInputs(capacity=capacity, prices=Prices(gpu_hour=gpu_hour, monthly=monthly), currency=currency)
