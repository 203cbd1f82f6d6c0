"""The cost inputs read from an inventory: pools' GPUs and prices, the site's monthly costs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.inputs import pools_from_hosts
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.model import CostError
from gpurack import cost
from gpurack.errors import UsageError


def _site(tmp_path: Path, pools: dict[str, dict[str, Any]], site: object = None) -> Path:
    """One group per pool, two hosts each, with the pool's variables as group_vars."""
    children = {group: {"hosts": {f"{group}-{i}": {} for i in (1, 2)}} for group in pools}
    (tmp_path / "hosts.yml").write_text(
        yaml.safe_dump({"all": {"children": {"gpu_nodes": {"children": children}}}})
    )
    for group, values in pools.items():
        folder = tmp_path / "group_vars" / group
        folder.mkdir(parents=True)
        (folder / "pool.yml").write_text(yaml.safe_dump(values))
    if site is not None:
        (tmp_path / "group_vars" / "all").mkdir(parents=True)
        (tmp_path / "group_vars" / "all" / "cost.yml").write_text(
            yaml.safe_dump({"gpurack_site_costs": site})
        )
    return tmp_path / "hosts.yml"


def _pool(name: str, gpus: int, price: object = 2.5) -> dict[str, Any]:
    pool: dict[str, Any] = {"name": name, "workload": "batch", "sharing": "full-gpu"}
    if price is not None:
        pool["cost"] = {"gpu_hour": price}
    return {"gpurack_pool": pool, "gpurack_expect": {"gpu": {"count": gpus}}}


def test_pools_count_their_hosts_gpus_and_the_site_costs_are_monthly(tmp_path: Path) -> None:
    site = {"currency": "EUR", "network": 1200, "storage": 800.5, "operations": 3000}
    inputs = cost.read_inputs(
        _site(tmp_path, {"h100": _pool("h100", 8, 2.5), "h200": _pool("h200", 1, 4)}, site)
    )
    assert inputs.capacity == {"h100": 16, "h200": 2}
    assert inputs.prices.gpu_hour == {"h100": 2.5, "h200": 4.0}
    assert inputs.prices.monthly == {"network": 1200.0, "storage": 800.5, "operations": 3000.0}
    assert inputs.currency == "EUR"


def test_without_site_costs_only_the_gpus_are_priced(tmp_path: Path) -> None:
    inputs = cost.read_inputs(_site(tmp_path, {"h100": _pool("h100", 8)}))
    assert inputs.prices.monthly == {} and inputs.currency == ""


@pytest.mark.parametrize(
    ("pools", "site", "message"),
    [
        ({"h100": _pool("h100", 8, None)}, None, r"pool h100 \(h100-1\): no gpurack_pool.cost.gpu_hour"),
        ({"h100": _pool("h100", 8, -1)}, None, "gpu_hour must be a finite number of at least 0, got -1"),
        ({"h100": _pool("h100", 8)}, {"coffee": 10}, "gpurack_site_costs: unknown key\\(s\\) coffee"),
        (
            {"h100": _pool("h100", 8)},
            {"network": "lots"},
            "gpurack_site_costs.network must be a finite number",
        ),
        ({"h100": _pool("h100", 8)}, [1, 2], "gpurack_site_costs must be a mapping"),
    ],
)
def test_bad_cost_inputs_are_one_line(
    tmp_path: Path, pools: dict[str, Any], site: object, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        cost.read_inputs(_site(tmp_path, pools, site))


def test_two_prices_for_one_pool_are_refused() -> None:
    hosts = {"a": _pool("h100", 8, 2.5), "b": _pool("h100", 8, 3.0)}
    with pytest.raises(CostError, match=r"pool h100: its hosts give two prices per GPU-hour \(2.5 and 3.0\)"):
        pools_from_hosts(hosts)


def test_an_inventory_without_pools_has_nothing_to_cost(tmp_path: Path) -> None:
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": {"cp1": {}}}}))
    with pytest.raises(UsageError, match="no host has a gpurack_pool; nothing to cost"):
        cost.read_inputs(tmp_path / "hosts.yml")
