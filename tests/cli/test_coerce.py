"""Reading untrusted values: a boolean as Ansible writes one, from a bool, 0/1 or its words."""

from __future__ import annotations

from datetime import date, datetime, time
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


@pytest.mark.parametrize(
    ("value", "plain"),
    [
        ({1: "a", None: "c", 2.5: "d"}, {"1": "a", "null": "c", "2.5": "d"}),
        ({True: "b", False: "c"}, {"true": "b", "false": "c"}),
        ((1, "x", [None, False]), [1, "x", [None, False]]),
        ({"a": {"b": [1.5, -(2**62)]}}, {"a": {"b": [1.5, -(2**62)]}}),
    ],
)
def test_plain_gives_json_data_as_json_writes_it(value: object, plain: object) -> None:
    assert coerce.plain(value) == plain


@pytest.mark.parametrize(
    ("value", "path", "what"),
    [
        ({"a": {"b": [0, date(2026, 1, 1)]}}, "v.a.b[1]", "is the date or time 2026-01-01, not text"),
        ({"at": datetime(2026, 1, 1, 10)}, "v.at", "is the date or time 2026-01-01T10:00:00"),
        ([time(10, 0)], "v[0]", "is the date or time 10:00:00"),
        ({"n": float("inf")}, "v.n", "is inf, not a finite number"),
        ({"n": float("-inf")}, "v.n", "is -inf, not a finite number"),
        ({"n": float("nan")}, "v.n", "is nan, not a finite number"),
        ({"n": 10**400}, "v.n", "is a number of 401 digits, too large"),
        ({"n": -(10**5000)}, "v.n", "is a number of 5001 digits, too large"),
        ({"s": {1, 2}}, "v.s", "is a set, which is not JSON data"),
        ({"b": b"raw"}, "v.b", "is a bytes, which is not JSON data"),
        ({date(2026, 1, 1): 1}, "v", "has the key datetime.date(2026, 1, 1), which is not text"),
    ],
)
def test_plain_refuses_what_json_cannot_hold_naming_where(value: object, path: str, what: str) -> None:
    with pytest.raises(coerce.NotPlainDataError) as caught:
        coerce.plain(value, "v")
    assert caught.value.path == path
    assert caught.value.what.startswith(what)
