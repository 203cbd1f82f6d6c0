"""Kubernetes' name rules as the API server checks them (validation.go), each a full match."""

from __future__ import annotations

import re

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils._k8s_names import (
    dns_label_error,
    dns_subdomain_error,
    is_dns_label,
    is_dns_subdomain,
    is_label_key,
    is_label_value,
    label_value_error,
)
from hypothesis import given
from hypothesis import strategies as st

# The API server's patterns, written out again from validation.go to test against: anchored
# with \A and \Z, which (unlike $) do not match before a trailing newline.
_LABEL = re.compile(r"\A[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_SUBDOMAIN = re.compile(r"\A[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_VALUE = re.compile(r"\A(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")

_ALPHABET = "abcz09-._AZ/\n é"


@pytest.mark.parametrize(
    ("value", "label", "subdomain", "label_value"),
    [
        ("research", True, True, True),
        ("research\n", False, False, False),
        ("a" * 63, True, True, True),
        ("a" * 64, False, True, False),
        ("a." * 126 + "a", False, True, False),
        ("a" * 254, False, False, False),
        ("a.b", False, True, True),
        ("Research", False, False, True),
        ("under_score", False, False, True),
        ("-a", False, False, False),
        ("a-", False, False, False),
        ("", False, False, True),
        ("é", False, False, False),
        ("a/b", False, False, False),
        ("\uff11", False, False, False),  # a full-width digit: \d would take it, Kubernetes does not
    ],
)
def test_each_rule_against_the_api_servers_cases(
    value: str, label: bool, subdomain: bool, label_value: bool
) -> None:
    assert (is_dns_label(value), is_dns_subdomain(value), is_label_value(value)) == (
        label,
        subdomain,
        label_value,
    )


@pytest.mark.parametrize(
    ("key", "valid"),
    [
        ("gpurack.io/pool", True),
        ("pool", True),
        ("gpurack.io/pool\n", False),
        ("gpurack.io\n/pool", False),
        ("/pool", False),
        ("gpurack.io/", False),
        ("a/b/c", False),
        ("GPURACK.io/pool", False),
        ("gpurack.io/" + "n" * 64, False),
        ("p" * 254 + "/n", False),
    ],
)
def test_label_keys(key: str, valid: bool) -> None:
    assert is_label_key(key) is valid


def test_errors_name_the_place_and_the_rule() -> None:
    assert dns_label_error("team x: name", "a.b", "research") == (
        "team x: name: 'a.b' must be a DNS label: at most 63 lower-case letters, digits and '-', "
        "starting and ending with a letter or digit"
    )
    assert dns_subdomain_error("gpurack_cohort", None, "site") == (
        "gpurack_cohort is required (a DNS subdomain such as 'site')"
    )
    assert dns_label_error("x", 5, "a") == "x must be a string (a DNS label such as 'a'), got 5"
    assert label_value_error("v", "ok") is None


@given(st.text(alphabet=_ALPHABET, max_size=300))
def test_the_rules_agree_with_the_api_servers_patterns(value: str) -> None:
    assert is_dns_label(value) == (len(value) <= 63 and _LABEL.match(value) is not None)
    assert is_dns_subdomain(value) == (len(value) <= 253 and _SUBDOMAIN.match(value) is not None)
    assert is_label_value(value) == (len(value) <= 63 and _VALUE.match(value) is not None)


@given(st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z"))
def test_a_valid_label_stays_valid_only_without_a_newline_or_upper_case(value: str) -> None:
    assert is_dns_label(value) and is_dns_subdomain(value) and is_label_value(value)
    assert not is_dns_label(value + "\n")
    assert not is_dns_subdomain(value + "\n")
    assert not is_label_value(value + "\n")
    assert not is_dns_label(value + "A")
