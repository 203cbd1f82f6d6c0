"""The lab inventory's pools follow the pool rules preflight checks before any change."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import pool_errors

POOL_FILES = sorted((Path(__file__).resolve().parents[1] / "inventory/group_vars").glob("*/pool.yml"))


def test_the_lab_has_pools() -> None:
    assert len(POOL_FILES) >= 4


@pytest.mark.parametrize("path", POOL_FILES, ids=lambda p: p.parent.name)
def test_lab_pool_is_valid(path: Path) -> None:
    pool = yaml.safe_load(path.read_text())["gpurack_pool"]
    assert pool_errors(pool) == []
    assert pool["name"] == path.parent.name.replace("_", "-")
