"""Property: operator inputs (expectations, pools, labels, taints) are accepted or refused with the
module's own error (UsageError, LabelError, a list of problems), and checks over facts of a mutated
node never raise."""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import run_checks, validate_expect
from ansible_collections.gpurack.bootstrap.plugins.module_utils.errors import FactsError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.node import gather_all
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.labels.derive import (
    LabelError,
    node_labels,
    pool_taints,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.node.metadata import plan
from gpurack.config import load_expect, load_pool
from gpurack.errors import UsageError
from hypothesis import given, settings
from hypothesis import strategies as st

from .fuzz_inputs import HOSTILE_NUMBERS, Draw, attempt, index, pick, texts
from .fuzz_node import NODES, REPO, DictSource, capture_node, mutated_node

EXAMPLE = REPO / "inventory" / "example" / "group_vars"
EXPECT_FILES = tuple(
    (p / "expect.yml").read_text() for p in sorted(EXAMPLE.iterdir()) if (p / "expect.yml").is_file()
)
POOL_FILES = tuple(
    (p / "pool.yml").read_text() for p in sorted(EXAMPLE.iterdir()) if (p / "pool.yml").is_file()
)
EXPECTS = tuple(yaml.safe_load(t)["gpurack_expect"] for t in EXPECT_FILES)
POOLS = tuple(yaml.safe_load(t)["gpurack_pool"] for t in POOL_FILES)
FACTS = gather_all(DictSource(NODES[1]))

# Scalars YAML and AWX surveys hand over: strings for everything, bools, floats, huge ints.
_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**80), 2**80),
    st.sampled_from((10**400, -1, 0, 1, 2**63)),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=70),
    st.sampled_from(HOSTILE_NUMBERS),
    st.sampled_from(
        ("kubernetes.io/hostname", "node-role.kubernetes.io/gpu", "gpurack.io/pool", "a/b/c", "/x", "x/")
    ),
)
_ANY = st.recursive(
    _SCALAR,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12) | st.integers(), inner, max_size=4)
    ),
    max_leaves=12,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found.extend(_paths(item, (*prefix, i)))
    return found


@st.composite
def mutated_doc(draw: Draw, bases: tuple[Any, ...]) -> Any:
    """A real expectations or pool mapping with one to four values replaced, removed or added."""
    doc = copy.deepcopy(pick(draw, bases))
    for _ in range(1 + index(draw, 4)):
        path = pick(draw, _paths(doc))
        if not path:
            continue
        *where, last = path
        node = doc
        for part in where:
            node = node[part]
        kind = index(draw, 3)
        if kind == 0:
            node[last] = draw(_ANY)
        elif kind == 1:
            del node[last]
        elif isinstance(node, dict):
            node[draw(st.text(max_size=12))] = draw(_ANY)
    return doc


@settings(database=None, deadline=None)
@given(st.one_of(mutated_doc(EXPECTS), _ANY))
def test_expectations_validate_and_checks_run(expect: Any) -> None:
    def check() -> None:
        errors = validate_expect(expect)
        assert isinstance(errors, list) and all(isinstance(e, str) for e in errors)
        if not errors:
            run_checks(FACTS, expect)

    attempt("expectations (validate_expect + run_checks)", check, ())


@pytest.fixture(scope="module")
def yaml_file() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp) / "input.yml"


_YAML_BYTES = st.one_of(
    texts(EXPECT_FILES + POOL_FILES, nest=("gpu:", "\n  - [", "]", "")).map(
        lambda t: t.encode("utf-8", "surrogateescape")
    ),
    texts(EXPECT_FILES).map(lambda t: t.encode("utf-16")),
    st.binary(max_size=300),
)


@settings(database=None, deadline=None)
@given(_YAML_BYTES)
def test_expectations_file_loads_or_refuses(yaml_file: Path, data: bytes) -> None:
    yaml_file.write_bytes(data)

    def load() -> None:
        expect = load_expect(yaml_file)
        run_checks(FACTS, expect)

    attempt("expectations file (load_expect + run_checks)", load, (UsageError,))


@settings(database=None, deadline=None)
@given(_YAML_BYTES)
def test_pool_file_loads_or_refuses(yaml_file: Path, data: bytes) -> None:
    yaml_file.write_bytes(data)

    def load() -> None:
        pool = load_pool(yaml_file)
        node_labels(FACTS, pool)
        pool_taints(pool)

    attempt("pool file (load_pool + labels + taints)", load, (UsageError, LabelError))


@settings(database=None, deadline=None)
@given(st.one_of(mutated_doc(POOLS), _ANY))
def test_pool_labels_and_taints_or_label_error(pool: Any) -> None:
    def derive() -> None:
        node_labels(FACTS, pool)
        pool_taints(pool)

    attempt("pool (node_labels + pool_taints)", derive, (LabelError,))


_CURRENT = {
    "labels": {"kubernetes.io/hostname": "n1", "gpurack.io/pool": "old"},
    "annotations": {"gpurack.io/managed-labels": "team"},
    "taints": [{"key": "gpurack.io/validating", "value": "", "effect": "NoSchedule"}],
}


@settings(database=None, deadline=None)
@given(_ANY, _ANY, st.sampled_from(("pass", "fail", "unknown")), _SCALAR)
def test_node_metadata_plan_or_label_error(labels: Any, taints: Any, validation: str, reason: Any) -> None:
    attempt(
        "node labels/taints plan (k8s_node_metadata)",
        lambda: plan(_CURRENT, labels, taints, validation, reason),
        (LabelError,),
    )


@settings(database=None, deadline=None)
@given(mutated_node(("sys/",), tuple(NODES[0].commands)), st.sampled_from(EXPECTS))
def test_checks_over_a_mutated_node_never_raise(source: DictSource, expect: dict[str, Any]) -> None:
    def gather_and_check() -> None:
        run_checks(gather_all(source), expect)

    attempt("node facts -> checks (gather_all + run_checks)", gather_and_check, (FactsError, CaptureError))


def test_the_facts_the_checks_start_from_are_real() -> None:
    assert FACTS["gpurack_gpu"]["count"] == 4
    assert capture_node(REPO / "tests" / "fixtures" / "captures" / "h200x4").commands
