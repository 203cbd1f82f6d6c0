"""The helper that answers Prometheus's HTTP service discovery with the inference pods
(roles/observability/files/gpurack-scrape-targets.py): the targets from EndpointSlices, and a
real server on loopback answering from a stand-in for the API server."""

from __future__ import annotations

import importlib.util
import json
import threading
import urllib.request
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

HELPER = (
    Path(__file__).resolve().parents[2] / "roles" / "observability" / "files" / "gpurack-scrape-targets.py"
)


def _helper() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpurack_scrape_targets", HELPER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


helper = _helper()


def _slice(
    namespace: str, service: str, endpoints: list[dict[str, Any]], port: str = "http"
) -> dict[str, Any]:
    return {
        "metadata": {"namespace": namespace, "labels": {"kubernetes.io/service-name": service}},
        "ports": [{"name": "metrics-other", "port": 9}, {"name": port, "port": 8000}],
        "endpoints": endpoints,
    }


def _endpoint(address: str, pod: str, ready: bool | None = True) -> dict[str, Any]:
    conditions = {} if ready is None else {"ready": ready}
    return {
        "addresses": [address],
        "targetRef": {"name": pod},
        "nodeName": "lab-w1",
        "conditions": conditions,
    }


SLICES = {
    "items": [
        _slice(
            "beta", "embed", [_endpoint("10.244.1.7", "embed-b"), _endpoint("10.244.1.6", "embed-a", None)]
        ),
        _slice("beta", "embed", [_endpoint("10.244.1.9", "embed-starting", ready=False)]),
        _slice("alpha", "chat", [_endpoint("fd00::5", "chat-a")]),
        _slice("alpha", "other", [_endpoint("10.0.0.1", "x")], port="grpc"),
    ]
}


def _target(address: str, namespace: str, service: str, pod: str) -> dict[str, Any]:
    labels = {"namespace": namespace, "service": service, "pod": pod, "node": "lab-w1"}
    return {"targets": [address], "labels": labels}


def test_every_ready_pod_on_its_http_port_with_its_labels() -> None:
    assert helper.targets(SLICES) == [
        _target("10.244.1.6:8000", "beta", "embed", "embed-a"),
        _target("10.244.1.7:8000", "beta", "embed", "embed-b"),
        _target("[fd00::5]:8000", "alpha", "chat", "chat-a"),
    ]
    assert helper.targets({}) == []


@pytest.fixture
def served() -> Iterator[tuple[str, list[Any]]]:
    """The helper's handler on loopback, its API answers from a list the test fills."""
    answers: list[Any] = []

    def fetch() -> dict[str, Any]:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return dict(answer)

    server = ThreadingHTTPServer(("127.0.0.1", 0), helper.handler(fetch))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", answers
    server.shutdown()
    server.server_close()


def test_prometheus_gets_json_and_an_error_status_when_the_api_fails(served: tuple[str, list[Any]]) -> None:
    url, answers = served
    answers.extend([SLICES, OSError("connection refused")])
    with urllib.request.urlopen(url, timeout=10) as answer:
        assert answer.headers["Content-Type"] == "application/json"
        assert len(json.load(answer)) == 3
    with pytest.raises(urllib.error.HTTPError) as failed:
        urllib.request.urlopen(url, timeout=10)
    assert failed.value.code == 502  # Prometheus keeps its last good list
