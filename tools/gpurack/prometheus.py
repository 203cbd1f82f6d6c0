"""Read gpurack's metrics back from Prometheus's HTTP API (`/api/v1/query`), stdlib only.

For `gpurack queue` and the lab's tests: which nodes validation admitted
(`gpurack_node_validated`) and which checks fail (`gpurack_check_verdict{verdict="fail"} == 1`),
as Prometheus holds them. The metric names are the collection's (module_utils/results/metrics.py).
A URL that is not http(s) raises UsageError (exit 64); an unreachable server, an HTTP error or
an answer that is not a vector raises NotAssessedError (exit 2), naming the URL.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import CHECK_VERDICT, NODE_VALIDATED

from gpurack.errors import NotAssessedError, UsageError

DEFAULT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Sample:
    """One series of an instant vector: its labels and its value."""

    labels: dict[str, str]
    value: float


@dataclass(frozen=True)
class NodeValidation:
    """A node's gpurack_node_validated as Prometheus has it."""

    node: str
    pool: str
    validated: bool


@dataclass(frozen=True)
class FailingCheck:
    """A check that fails on a node, from gpurack_check_verdict."""

    node: str
    check: str
    component: str


def _get(url: str, base_url: str, timeout: float) -> Any:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return json.load(response)
    except urllib.error.HTTPError as exc:
        # Prometheus explains a refused query in the JSON body (errorType, error).
        try:
            body = json.load(exc)
        except ValueError:
            body = {}
        detail = body.get("error") if isinstance(body, dict) else None
        raise NotAssessedError(
            f"Prometheus at {base_url} answered HTTP {exc.code}" + (f": {detail}" if detail else "")
        ) from None
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        reason = getattr(exc, "reason", exc)
        raise NotAssessedError(f"cannot reach Prometheus at {base_url}: {reason}") from None
    except ValueError as exc:
        raise NotAssessedError(f"Prometheus at {base_url}: its answer is not JSON: {exc}") from None


def query(base_url: str, promql: str, timeout: float = DEFAULT_TIMEOUT_S) -> list[Sample]:
    """An instant query's vector, e.g. `query("http://cp1:9090", "gpurack_node_validated")`.

    Raises:
        UsageError: `base_url` is not an http(s) URL.
        NotAssessedError: unreachable, an HTTP error, `status` not success, or not a vector.
    """
    parsed = urllib.parse.urlsplit(base_url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise UsageError(f"not a Prometheus URL: {base_url!r} (expected http://HOST:PORT)")
    url = f"{base_url.rstrip('/')}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    answer = _get(url, base_url, timeout)
    if not isinstance(answer, dict) or answer.get("status") != "success":
        error = answer.get("error") if isinstance(answer, dict) else answer
        raise NotAssessedError(f"Prometheus at {base_url} refused {promql!r}: {error}")
    data = answer.get("data") or {}
    if data.get("resultType") != "vector" or not isinstance(data.get("result"), list):
        raise NotAssessedError(
            f"Prometheus at {base_url} answered {promql!r} with a {data.get('resultType')!r}, not a vector"
        )
    try:
        return [
            Sample({str(k): str(v) for k, v in item["metric"].items()}, float(item["value"][1]))
            for item in data["result"]
        ]
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise NotAssessedError(
            f"Prometheus at {base_url}: the vector for {promql!r} is malformed: {exc!r}"
        ) from None


def node_validations(base_url: str, timeout: float = DEFAULT_TIMEOUT_S) -> list[NodeValidation]:
    """Every node's gpurack_node_validated, sorted by node (one per node: the newest scrape)."""
    found = {
        s.labels.get("node", ""): NodeValidation(
            s.labels.get("node", ""), s.labels.get("pool", ""), s.value == 1
        )
        for s in query(base_url, NODE_VALIDATED, timeout)
    }
    return [found[node] for node in sorted(found)]


def failing_checks(base_url: str, timeout: float = DEFAULT_TIMEOUT_S) -> list[FailingCheck]:
    """The checks whose current verdict is fail, sorted by node, check and component."""
    samples = query(base_url, f'{CHECK_VERDICT}{{verdict="fail"}} == 1', timeout)
    checks = {
        FailingCheck(s.labels.get("node", ""), s.labels.get("check", ""), s.labels.get("component", ""))
        for s in samples
    }
    return sorted(checks, key=lambda c: (c.node, c.check, c.component))
