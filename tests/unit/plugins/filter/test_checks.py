"""expect_errors: the expectation rules of node_checks, in the controller (the preflight role
refuses bad expectations with it before it reads any node)."""

from __future__ import annotations

import pytest
from ansible_collections.gpurack.bootstrap.plugins.filter.checks import expect_errors
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import validate_expect


class _Tagged(str):
    """A str subclass, as Ansible 2.19 hands templated values to a filter."""


@pytest.mark.parametrize(
    "expect",
    [
        {"gpu": {"count": -1}},
        {"gpu": {"cont": 8}},
        {"gpu": {"count": "eight"}},
        {"nvme": {"count": 2.5}},
        None,
        {"gpu": {"count": 8, "model": "H200"}},
    ],
)
def test_the_filter_says_what_node_checks_says(expect: object) -> None:
    assert expect_errors(expect) == validate_expect(expect)


def test_a_bad_count_is_named_by_its_path() -> None:
    assert expect_errors({"gpu": {"count": -1}}) == [
        "gpurack_expect.gpu.count: expected a non-negative integer, got -1"
    ]
    assert expect_errors({"gpu": {"count": 8}}) == []


def test_ansibles_tagged_strings_are_judged_as_strings() -> None:
    assert expect_errors({_Tagged("gpu"): {_Tagged("model"): _Tagged("H200")}}) == validate_expect(
        {"gpu": {"model": "H200"}}
    )
