"""Property (issue #32, class 3): any YAML-shaped inventory value, anywhere in a variable that a
verb reads, is plain JSON data or `NotPlainDataError` (the driver's one exit-64 line), and the
typed readers of every `-i` verb then give a result or their own error, never another exception.

The values are what YAML and Ansible hand over: text, booleans, None, integers of any size,
floats with inf and nan, dates and times, lists and mappings of them, nested.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance import settings
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.inputs import (
    pools_from_hosts,
    site_costs,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost.model import CostError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.model import PlatformInputError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.platform.site import site_from_hostvars
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.fabric import (
    plan_from_vars,
    target_from_vars,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.switch.plan import PlanError
from gpurack import coerce
from hypothesis import given
from hypothesis import strategies as st

from .fuzz_inputs import attempt

EXAMPLE = Path(__file__).resolve().parents[2] / "inventory" / "example" / "group_vars"

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([400, -400, 5000, 19, 20]).map(
        lambda digits: (10 ** abs(digits)) * (1 if digits > 0 else -1)
    ),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.dates(),
    st.datetimes(),
    st.times(),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.one_of(st.text(max_size=8), st.integers(), st.dates()), inner, max_size=4)
    ),
    max_leaves=12,
)


def _load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((EXAMPLE / name).read_text())
    return loaded


# The example site, less the pool that HOST is not in: a site that renders as it stands.
SITE = {
    **_load("all/teams.yml"),
    "gpurack_teams": [
        {"name": "research", "groups": ["research-users"], "priority": "training",
         "quota": {"h100-train-a": {"gpus": 8, "cpu": "64", "memory": "1Ti"}}},
    ],
}  # fmt: skip
HOST = {**_load("h100_train_a/pool.yml"), **_load("h100_train_a/expect.yml")}
COSTS = {
    "gpurack_site_costs": {"currency": "EUR", "network": 730, "storage": 1460},
    "gpurack_acceptance": {"baseline": {"kind": "gpu_hour", "price": 2.5}},
}
FABRIC = {
    "gpurack_cabling": {"mlx5_0": {"switch": "leaf1", "port": "Et1"}},
    "gpurack_fabric": {"mtu": 4200},
    "gpurack_expect": {"rdma": {"ports": 1}},
}
SWITCH = {"ansible_host": "192.0.2.9", "ansible_port": 22, "ansible_user": "admin", "ansible_password": "pw"}


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield from _paths(item, (*path, key))


def _replaced(base: dict[str, Any], data: st.DataObject) -> dict[str, Any] | None:
    """`base` with one place (a whole variable or anything inside one) set to a random value,
    then read as the driver reads it (`coerce.plain`); None when that refuses it."""
    paths = [p for p in _paths(base) if p]
    path = data.draw(st.sampled_from(paths))
    changed = copy.deepcopy(base)
    cursor: Any = changed
    for key in path[:-1]:
        cursor = cursor[key]
    cursor[path[-1]] = data.draw(VALUES)
    try:
        plain: dict[str, Any] = coerce.plain(changed)
    except coerce.NotPlainDataError:
        return None
    return plain


@given(VALUES)
def test_any_value_is_json_data_or_not_plain(value: Any) -> None:
    def call() -> None:
        plain = coerce.plain(value, "v")
        json.dumps(plain, allow_nan=False)
        assert not _holds(plain, (date, datetime, time))

    attempt("inventory value", call, (coerce.NotPlainDataError,))


def _holds(value: Any, types: tuple[type, ...]) -> bool:
    if isinstance(value, dict):
        return any(_holds(v, types) for v in value.values())
    if isinstance(value, list):
        return any(_holds(v, types) for v in value)
    return isinstance(value, types)


def _reader(name: str, base: dict[str, Any], read: Callable[[dict[str, Any]], object], errors: Any) -> Any:
    @given(st.data())
    def test(data: st.DataObject) -> None:
        changed = _replaced(base, data)
        if changed is not None:
            attempt(name, lambda: read(changed), errors)

    return test


test_platform_site_reads_any_team_or_setting = _reader(
    "platform site vars",
    SITE,
    lambda site: site_from_hostvars({"h1": HOST}, ["h1"], site),
    PlatformInputError,
)
test_platform_site_reads_any_pool_or_expectation = _reader(
    "platform host vars",
    HOST,
    lambda host: site_from_hostvars({"h1": host}, ["h1"], SITE),
    PlatformInputError,
)
test_cost_reads_any_pool_or_expectation = _reader(
    "cost host vars", HOST, lambda host: pools_from_hosts({"h1": host}), CostError
)
test_cost_reads_any_site_costs = _reader(
    "cost site vars",
    COSTS,
    lambda site: (site_costs(site["gpurack_site_costs"]), settings.read(site["gpurack_acceptance"])),
    (CostError, settings.SettingsError),
)
test_fabric_reads_any_plan = _reader(
    "fabric plan vars", FABRIC, lambda server: plan_from_vars({"gpu01": server}), PlanError
)
test_fabric_reads_any_switch_login = _reader(
    "fabric switch vars", SWITCH, lambda switch: target_from_vars("leaf1", switch), PlanError
)
