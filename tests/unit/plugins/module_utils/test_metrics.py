"""Textfile metrics: the exposition parses back strictly, labels are escaped, the verdict encoding holds."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.metrics import (
    CHECK_MEASURED,
    CHECK_VERDICT,
    NODE_VALIDATED,
    VALIDATION_TIMESTAMP,
    escape_label_value,
    format_value,
    render_textfile,
    same_values,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import VERDICTS, CheckResult

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL_VALUE = r'"((?:[^"\\\n]|\\[\\"n])*)"'
HELP_LINE = re.compile(rf"^# HELP ({NAME}) ((?:[^\\\n]|\\[\\n])*)$")
TYPE_LINE = re.compile(rf"^# TYPE ({NAME}) (counter|gauge|histogram|summary|untyped)$")
SAMPLE_LINE = re.compile(rf"^({NAME})\{{((?:{NAME}={LABEL_VALUE},?)*)\}} (\S+)$")
LABEL = re.compile(rf"({NAME})={LABEL_VALUE}")

Series = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "\\": "\\", '"': '"'}[m.group(1)], text)


def parse(text: str) -> tuple[Series, dict[str, str], dict[str, str]]:
    """A strict reader of the text format: every line valid, TYPE before samples, no repeated series."""
    assert text.endswith("\n")
    series: Series = {}
    helps: dict[str, str] = {}
    types: dict[str, str] = {}
    for line in text.splitlines():
        if m := HELP_LINE.match(line):
            assert m.group(1) not in helps
            helps[m.group(1)] = unescape(m.group(2))
        elif m := TYPE_LINE.match(line):
            assert m.group(1) not in types
            types[m.group(1)] = m.group(2)
        elif m := SAMPLE_LINE.match(line):
            name, body, value = m.groups()[0], m.group(2), m.groups()[-1]
            assert name in types, f"sample before its TYPE: {line}"
            labels = tuple((k, unescape(v)) for k, v in LABEL.findall(body))
            assert ",".join(f'{k}="{escape_label_value(v)}"' for k, v in labels) == body.rstrip(",")
            assert (name, labels) not in series, f"repeated series: {line}"
            series[(name, labels)] = float(value)
        else:
            pytest.fail(f"not exposition format: {line!r}")
    return series, helps, types


def result(check: str, verdict: str, component: str = "node", measured: Any = None) -> dict[str, Any]:
    return CheckResult(id=check, verdict=verdict, component=component, measured=measured).to_dict()


RESULTS = [
    result("gpu.count", "fail", measured=1),
    result("gpu.memory", "pass", component="gpu0", measured=143771.0),
    result("rdma.state", "warn", component="mlx5_0", measured={"state": "DOWN"}),
    result("os.kernel", "skip", measured="6.1.0"),
    result("gpu.ecc", "pass", component="gpu0", measured=True),
]


def labelled(series: Series, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {labels: value for (n, labels), value in series.items() if n == name}


def test_render_parses_back_with_every_family_typed_and_helped() -> None:
    text = render_textfile("gpu01", "h200-train-a", RESULTS, 1767225600.5, validated=False)
    series, helps, types = parse(text)
    assert types == dict.fromkeys(
        (CHECK_VERDICT, CHECK_MEASURED, NODE_VALIDATED, VALIDATION_TIMESTAMP), "gauge"
    )
    assert set(helps) == set(types)
    node = (("node", "gpu01"), ("pool", "h200-train-a"))
    assert series[(NODE_VALIDATED, node)] == 0
    assert series[(VALIDATION_TIMESTAMP, node)] == 1767225600.5


def test_verdict_is_a_state_set_one_for_the_verdict_zero_for_the_others() -> None:
    series, _, _ = parse(render_textfile("gpu01", "p", RESULTS, 0))
    verdicts = labelled(series, CHECK_VERDICT)
    assert len(verdicts) == len(RESULTS) * len(VERDICTS)
    for item in RESULTS:
        base = (("node", "gpu01"), ("pool", "p"), ("check", item["id"]), ("component", item["component"]))
        values = {v: verdicts[(*base, ("verdict", v))] for v in VERDICTS}
        assert values == {v: float(v == item["verdict"]) for v in VERDICTS}


def test_measured_only_where_the_check_measured_a_number() -> None:
    series, _, _ = parse(render_textfile("gpu01", "p", RESULTS, 0))
    measured = {dict(k)["check"]: v for k, v in labelled(series, CHECK_MEASURED).items()}
    assert measured == {"gpu.count": 1, "gpu.memory": 143771.0, "gpu.ecc": 1}


def test_validated_defaults_to_the_node_verdict_being_pass() -> None:
    passing = [result("gpu.count", "pass", measured=8), result("os.kernel", "skip")]
    for results, expected in ((passing, 1), (RESULTS, 0), ([result("a", "warn")], 0), ([], 0)):
        series, _, _ = parse(render_textfile("n", "p", results, 0))
        assert labelled(series, NODE_VALIDATED) == {(("node", "n"), ("pool", "p")): expected}
    series, _, _ = parse(render_textfile("n", "p", [result("a", "warn")], 0, validated=True))
    assert next(iter(labelled(series, NODE_VALIDATED).values())) == 1


def test_label_values_are_escaped_and_read_back_unchanged() -> None:
    odd = 'gpu "0"\\slot\nB'
    assert escape_label_value(odd) == 'gpu \\"0\\"\\\\slot\\nB'
    text = render_textfile('node"1', None, [result("x.y", "fail", component=odd, measured=2)], 0)
    series, _, _ = parse(text)
    [labels] = labelled(series, CHECK_MEASURED)
    assert dict(labels) == {"node": 'node"1', "pool": "", "check": "x.y", "component": odd}


def test_order_is_deterministic_whatever_the_input_order() -> None:
    a = render_textfile("n", "p", RESULTS, 5)
    b = render_textfile("n", "p", list(reversed(RESULTS)), 5)
    assert a == b
    checks = [
        line.split('check="')[1].split('"')[0] for line in a.splitlines() if line.startswith(CHECK_MEASURED)
    ]
    assert checks == sorted(checks)


def test_a_repeated_check_and_component_keeps_the_more_significant_verdict() -> None:
    twice = [result("gpu.count", "pass", measured=8), result("gpu.count", "fail", measured=1)]
    series, _, _ = parse(render_textfile("n", "p", twice, 0))
    assert labelled(series, CHECK_MEASURED) == {
        (("node", "n"), ("pool", "p"), ("check", "gpu.count"), ("component", "node")): 1
    }
    assert sum(labelled(series, CHECK_VERDICT).values()) == 1


def test_same_values_ignores_only_the_timestamp() -> None:
    first = render_textfile("n", "p", RESULTS, 100)
    assert same_values(first, render_textfile("n", "p", RESULTS, 200))
    assert not same_values(first, render_textfile("n", "p", RESULTS[:-1], 100))
    assert not same_values(first, render_textfile("n", "p", RESULTS, 100, validated=True))
    assert not same_values(None, first)


@pytest.mark.parametrize(
    ("value", "text"),
    [(1, "1"), (True, "1"), (False, "0"), (2.0, "2"), (0.25, "0.25"), (math.nan, "NaN"), (-math.inf, "-Inf")],
)
def test_format_value(value: float, text: str) -> None:
    assert format_value(value) == text
