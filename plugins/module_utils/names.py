# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Kubernetes' name rules, the one place gpurack checks a name against them (pure, stdlib only).

Each rule is the API server's own, from k8s.io/apimachinery/pkg/util/validation/validation.go:
- DNS-1123 label (`IsDNS1123Label`): at most 63 characters of a-z, 0-9 and '-', starting and
  ending with a letter or digit. Namespace names, Service names, a label key's name part when
  lower case is wanted.
- DNS-1123 subdomain (`IsDNS1123Subdomain`): at most 253 characters, DNS labels joined by '.'.
  Most object names (ClusterQueue, ResourceFlavor, WorkloadPriorityClass, Node).
- Qualified name (`IsQualifiedName`): a label or annotation key, an optional DNS-subdomain
  prefix and '/', then at most 63 characters of A-Z, a-z, 0-9, '-', '_' and '.', starting and
  ending with a letter or digit.
- Label value (`IsValidLabelValue`): empty, or at most 63 characters as a key's name part.

Every pattern is matched whole (`re.fullmatch`): `$` would also match before a trailing newline,
so `name: |` in YAML would pass a check that the API server then refuses. A name is checked by
the rule of each place it lands, the strictest first: a team's name becomes a Namespace (label)
and a ClusterQueue (subdomain), so it is checked as a label.
"""

from __future__ import annotations

import re

DNS_LABEL_MAX = 63
DNS_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")


def is_dns_label(value: object) -> bool:
    """True when `value` is a DNS-1123 label (a Namespace's name)."""
    return isinstance(value, str) and len(value) <= DNS_LABEL_MAX and _DNS_LABEL.fullmatch(value) is not None


def is_dns_subdomain(value: object) -> bool:
    """True when `value` is a DNS-1123 subdomain (most objects' names, a Node's name)."""
    return (
        isinstance(value, str)
        and len(value) <= DNS_SUBDOMAIN_MAX
        and _DNS_SUBDOMAIN.fullmatch(value) is not None
    )


def is_label_value(value: object) -> bool:
    """True when `value` is a label value (empty, or a qualified name's name part)."""
    return isinstance(value, str) and (
        value == "" or (len(value) <= LABEL_VALUE_MAX and _QUALIFIED_NAME.fullmatch(value) is not None)
    )


def label_key_syntax_error(key: object) -> str | None:
    """Why `key` is not a qualified name (a label or annotation key), or None when it is."""
    if not isinstance(key, str) or not key:
        return f"label key {key!r} must be a non-empty string"
    prefix, slash, name = key.rpartition("/")
    if "/" in prefix:
        return f"label key {key!r} has more than one '/'"
    if not name:
        return f"label key {key!r} has an empty name part"
    if slash and not prefix:
        return f"label key {key!r} has an empty prefix before '/'"
    if prefix and not is_dns_subdomain(prefix):
        return (
            f"label key {key!r}: prefix {prefix!r} must be a DNS subdomain of at most {DNS_SUBDOMAIN_MAX} "
            "lower-case letters, digits, '-' and '.'"
        )
    if len(name) > QUALIFIED_NAME_MAX or _QUALIFIED_NAME.fullmatch(name) is None:
        return (
            f"label key {key!r}: name part must be at most {QUALIFIED_NAME_MAX} characters of "
            "[A-Za-z0-9-_.], starting and ending with a letter or digit"
        )
    return None


def is_label_key(key: object) -> bool:
    """True when `key` is a qualified name (a label or annotation key)."""
    return label_key_syntax_error(key) is None


def _missing(where: str, value: object, rule: str, example: str) -> str | None:
    if value in (None, ""):
        return f"{where} is required (a {rule} such as {example!r})"
    if not isinstance(value, str):
        return f"{where} must be a string (a {rule} such as {example!r}), got {value!r}"
    return None


def dns_label_error(where: str, value: object, example: str) -> str | None:
    """Why `value` is not a DNS-1123 label, naming `where`; None when it is one."""
    if err := _missing(where, value, "DNS label", example):
        return err
    if not is_dns_label(value):
        return (
            f"{where}: {value!r} must be a DNS label: at most {DNS_LABEL_MAX} lower-case letters, "
            "digits and '-', starting and ending with a letter or digit"
        )
    return None


def dns_subdomain_error(where: str, value: object, example: str) -> str | None:
    """Why `value` is not a DNS-1123 subdomain, naming `where`; None when it is one."""
    if err := _missing(where, value, "DNS subdomain", example):
        return err
    if not is_dns_subdomain(value):
        return (
            f"{where}: {value!r} must be a DNS subdomain: at most {DNS_SUBDOMAIN_MAX} lower-case "
            "letters, digits, '-' and '.', each part starting and ending with a letter or digit"
        )
    return None


def node_name_error(where: str, name: object) -> str | None:
    """Why `name` cannot be a Node's name, naming `where`; None when it can. A Node's name is a
    DNS subdomain (ValidateNodeName in k8s.io/kubernetes/pkg/apis/core/validation/validation.go);
    kubelet lower-cases the host name it registers, kubeadm's nodeRegistration.name it does not."""
    return dns_subdomain_error(where, name, "gpu01")


def label_key_error(where: str, key: object) -> str | None:
    """Why `key` is not a label key (a qualified name), naming `where`; None when it is one.

    Syntax only: whether a prefix is Kubernetes' own (kubernetes.io, k8s.io) is the caller's rule
    (_labels.label_key_error refuses those in a pool; a selector may use them)."""
    if err := label_key_syntax_error(key):
        return f"{where}: {err}"
    return None


def label_value_error(where: str, value: object) -> str | None:
    """Why `value` is not a label value, naming `where`; None when it is one."""
    if not is_label_value(value):
        return (
            f"{where}: {value!r} must be a label value: empty, or at most {LABEL_VALUE_MAX} characters "
            "of [A-Za-z0-9-_.] starting and ending with a letter or digit"
        )
    return None
