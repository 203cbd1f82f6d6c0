"""Reading untrusted values: a boolean as Ansible writes one, from a bool, 0/1 or its words."""

from __future__ import annotations

from typing import Any

import pytest
from gpurack import coerce


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        ("True", True),
        (" yes ", True),
        ("on", True),
        (1, True),
        ("False", False),
        ("no", False),
        ("0", False),
        (0, False),
        ("", None),
        ("perhaps", None),
        (2, None),
        (1.0, None),
        (None, None),
        (["true"], None),
    ],
)
def test_flag_reads_ansible_booleans_and_nothing_else(value: Any, expected: bool | None) -> None:
    assert coerce.flag(value) is expected


def test_mapping_and_mappings_drop_what_is_not_a_mapping() -> None:
    assert coerce.mapping(["a"]) == {}
    assert coerce.mappings([{"a": 1}, "b", None]) == [{"a": 1}]
    assert coerce.mappings({"a": 1}) == []
