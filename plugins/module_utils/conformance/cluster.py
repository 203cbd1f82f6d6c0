# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What the conformance tests need of a cluster: the API server's REST paths and Prometheus's
query API, behind one small protocol, so that each test also runs against a fake (the unit
tests make each one fail). `KubeCluster` is the real one (the kubernetes client is imported
when it is made).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional, Protocol, TypeVar

from ansible.module_utils.urls import open_url

T = TypeVar("T")


class ApiError(Exception):
    """The API server (or Prometheus) refused a call: its HTTP status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class Cluster(Protocol):
    """The calls the tests make; paths are the API server's (`/apis/resource.k8s.io/v1`)."""

    def get(self, path: str) -> Optional[dict[str, Any]]: ...  # noqa: UP045 - None: not found

    def create(self, path: str, body: Mapping[str, Any], dry_run: bool = False) -> dict[str, Any]: ...

    def delete(self, path: str) -> None: ...

    def log(self, path: str) -> str: ...

    def query(self, promql: str) -> list[dict[str, Any]]: ...


def poll(probe: Callable[[], Optional[T]], timeout_s: float, every_s: float = 1.0) -> Optional[T]:  # noqa: UP045
    """`probe()` until it returns something other than None, for at most `timeout_s`; its last answer."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = probe()
        if found is not None or time.monotonic() >= deadline:
            return found
        time.sleep(every_s)


class KubeCluster:
    """A Cluster over a kubernetes DynamicClient (its `request`, which signs each call as the
    kubeconfig says) and a Prometheus URL ("" for none)."""

    def __init__(self, dynamic: Any, api_error: type[Exception], prometheus_url: str = "") -> None:
        self._dynamic = dynamic
        self._error = api_error
        self._prometheus = prometheus_url.rstrip("/")

    def _call(self, method: str, path: str, body: Any = None, query: Sequence[tuple[str, str]] = ()) -> bytes:
        path, text = [*path.split("?", 1), ""][:2]
        params = [*urllib.parse.parse_qsl(text), *query]
        try:
            answer = self._dynamic.request(method, path, body=body, query_params=params, serialize=False)
        except self._error as exc:
            raise ApiError(int(getattr(exc, "status", 0) or 0), _message(exc)) from None
        return bytes(answer.data or b"")

    def get(self, path: str) -> Optional[dict[str, Any]]:  # noqa: UP045
        try:
            return dict(json.loads(self._call("GET", path)))
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    def create(self, path: str, body: Mapping[str, Any], dry_run: bool = False) -> dict[str, Any]:
        query = [("dryRun", "All")] if dry_run else []
        return dict(json.loads(self._call("POST", path, dict(body), query)))

    def delete(self, path: str) -> None:
        try:
            self._call("DELETE", path, None, [("propagationPolicy", "Background")])
        except ApiError as exc:
            if exc.status != 404:
                raise

    def log(self, path: str) -> str:
        return self._call("GET", path).decode("utf-8", "replace")

    def query(self, promql: str) -> list[dict[str, Any]]:
        if not self._prometheus:
            raise ApiError(0, "no Prometheus URL (conformance_prometheus_url)")
        url = f"{self._prometheus}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
        try:
            with open_url(url, timeout=10) as answer:
                data = json.load(answer)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise ApiError(0, f"Prometheus at {self._prometheus}: {exc}") from None
        return list((data.get("data") or {}).get("result") or [])


def _message(exc: Any) -> str:
    try:
        return str(json.loads(exc.body or "{}").get("message") or exc.reason)
    except (ValueError, AttributeError):
        return str(getattr(exc, "reason", exc))
