"""Kubernetes' name rules as the API server checks them (validation.go), each a full match."""

from __future__ import annotations

import re

import pytest
from ansible_collections.gpurack.bootstrap.plugins.filter.names import node_name_errors
from ansible_collections.gpurack.bootstrap.plugins.module_utils.names import (
    dns_label_error,
    dns_subdomain_error,
    is_dns_label,
    is_dns_subdomain,
    is_label_key,
    is_label_value,
    label_key_error,
    label_value_error,
    node_name_error,
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
    assert label_key_error("gpurack_object_store.pod_labels", "a/b/c") == (
        "gpurack_object_store.pod_labels: label key 'a/b/c' has more than one '/'"
    )
    assert label_key_error("x", "app.kubernetes.io/name") is None  # Kubernetes' prefixes: the caller's rule


@pytest.mark.parametrize(
    "name", ["GPU-01", "gpu_01", "gpu-01.", "gpu-01\n", "g" * 254, "a/b", "..", "", None, 7]
)
def test_a_node_name_kubernetes_refuses_is_named(name: object) -> None:
    error = node_name_error("inventory host name", name)
    assert error is not None and error.startswith("inventory host name")
    assert node_name_errors(name, "inventory host name") == [error]


@pytest.mark.parametrize("name", ["gpu-01", "gpu-01.rack-2.example", "10.0.0.5", "g" * 253])
def test_a_node_name_kubernetes_accepts_passes(name: str) -> None:
    assert node_name_error("x", name) is None
    assert node_name_errors(name) == []


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


# A label key written out again from validation.go (IsQualifiedName): an optional DNS-subdomain
# prefix and '/', then a name part of at most 63.
_KEY_NAME = re.compile(r"\A([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_KEY_ALPHABET = "abz09-._AZ/\n"


def _written_out_key(key: str) -> bool:
    prefix, slash, name = key.rpartition("/")
    if slash and not (len(prefix) <= 253 and _SUBDOMAIN.match(prefix)):
        return False
    return len(name) <= 63 and _KEY_NAME.match(name) is not None


@given(st.text(alphabet=_KEY_ALPHABET, max_size=80))
def test_label_keys_agree_with_the_api_servers_pattern(key: str) -> None:
    assert is_label_key(key) == _written_out_key(key)


_DNS_LABELS = st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")
_KEY_NAMES = st.from_regex(r"\A[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?\Z")


@given(st.lists(_DNS_LABELS, min_size=1, max_size=8), _KEY_NAMES)
def test_a_key_is_valid_exactly_while_its_prefix_fits_and_never_with_a_newline(
    parts: list[str], name: str
) -> None:
    prefix = ".".join(parts)
    key = f"{prefix}/{name}"
    assert is_label_key(key) == (len(prefix) <= 253)
    assert is_label_key(name)
    assert not is_label_key(key + "\n")
    assert not is_label_key(prefix.upper() + "X/" + name)
    assert not is_label_key(f"{prefix}/{name}{'n' * (64 - len(name))}")


@given(st.lists(_DNS_LABELS, min_size=1, max_size=10))
def test_a_subdomain_is_valid_exactly_up_to_253_characters(parts: list[str]) -> None:
    name = ".".join(parts)
    assert is_dns_subdomain(name) == (len(name) <= 253)
    assert not is_dns_subdomain(name + "\n")
    assert not is_dns_subdomain(name + ".")
    assert not is_dns_subdomain(name.upper() + "A")


@given(st.integers(min_value=0, max_value=300))
def test_every_rule_at_its_length_limit(length: int) -> None:
    value = "a" * length
    assert is_dns_label(value) == (1 <= length <= 63)
    assert is_dns_subdomain(value) == (1 <= length <= 253)
    assert is_label_value(value) == (length <= 63)
    assert is_label_key(value) == (1 <= length <= 63)
    assert is_label_key(f"{value}/n") == (1 <= length <= 253)
