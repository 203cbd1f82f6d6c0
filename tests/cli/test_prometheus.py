"""gpurack.prometheus against a fake Prometheus HTTP API on 127.0.0.1 (http.server in a thread)."""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from gpurack.errors import ExitCode, NotAssessedError
from gpurack.prometheus import FailingCheck, NodeValidation, Sample, failing_checks, node_validations, query


def vector(*series: tuple[dict[str, str], str]) -> dict[str, Any]:
    result = [{"metric": labels, "value": [1767225600.0, value]} for labels, value in series]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


ANSWERS: dict[str, tuple[int, Any]] = {
    "gpurack_node_validated": (
        200,
        vector(
            ({"__name__": "gpurack_node_validated", "node": "gpu02", "pool": "p", "job": "node"}, "0"),
            ({"__name__": "gpurack_node_validated", "node": "gpu01", "pool": "p", "job": "node"}, "1"),
        ),
    ),
    'gpurack_check_verdict{verdict="fail"} == 1': (
        200,
        vector(
            ({"node": "gpu02", "check": "rdma.state", "component": "mlx5_1", "verdict": "fail"}, "1"),
            ({"node": "gpu02", "check": "gpu.count", "component": "node", "verdict": "fail"}, "1"),
        ),
    ),
    "bad(": (400, {"status": "error", "errorType": "bad_data", "error": "parse error at char 5"}),
    "scalar(1)": (200, {"status": "success", "data": {"resultType": "scalar", "result": [0, "1"]}}),
    "broken": (200, {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}}]}}),
}


class FakePrometheus(BaseHTTPRequestHandler):
    """Answers GET /api/v1/query?query=... from ANSWERS; records the queries asked."""

    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        [promql] = urllib.parse.parse_qs(url.query)["query"]
        FakePrometheus.asked.append(promql)
        code, body = ANSWERS.get(promql, (200, vector())) if url.path == "/api/v1/query" else (404, {})
        raw = json.dumps(body).encode() if promql != "not-json" else b"<html>"
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def prometheus() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakePrometheus)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakePrometheus.asked = []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_node_validations_sorted_by_node(prometheus: str) -> None:
    assert node_validations(prometheus) == [
        NodeValidation("gpu01", "p", True),
        NodeValidation("gpu02", "p", False),
    ]
    assert FakePrometheus.asked == ["gpurack_node_validated"]


def test_failing_checks_of_every_node(prometheus: str) -> None:
    assert failing_checks(prometheus) == [
        FailingCheck("gpu02", "gpu.count", "node"),
        FailingCheck("gpu02", "rdma.state", "mlx5_1"),
    ]


def test_query_returns_labels_and_values(prometheus: str) -> None:
    [first, _] = query(prometheus, "gpurack_node_validated")
    assert first == Sample(
        {"__name__": "gpurack_node_validated", "node": "gpu02", "pool": "p", "job": "node"}, 0.0
    )
    assert query(prometheus, "up == 2") == []


@pytest.mark.parametrize(
    ("promql", "message"),
    [
        ("bad(", r"Prometheus at http://127\.0\.0\.1:\d+/? answered HTTP 400: parse error at char 5"),
        ("scalar(1)", r"answered 'scalar\(1\)' with a 'scalar', not a vector"),
        ("broken", r"vector for 'broken' is malformed"),
        ("not-json", r"is not JSON"),
    ],
)
def test_bad_answers_are_not_assessed(prometheus: str, promql: str, message: str) -> None:
    with pytest.raises(NotAssessedError, match=message) as caught:
        query(prometheus, promql)
    assert caught.value.code is ExitCode.NOT_ASSESSED


def test_unreachable_prometheus_names_the_url() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakePrometheus)
    port = server.server_address[1]
    server.server_close()
    with pytest.raises(NotAssessedError, match=rf"cannot reach Prometheus at http://127.0.0.1:{port}: "):
        query(f"http://127.0.0.1:{port}", "gpurack_node_validated", timeout=2)
