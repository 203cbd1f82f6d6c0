"""A minimal Prometheus HTTP API client: one instant query, its vector as frozen samples.

Standard library only (urllib): `instant_query(url, promql)` asks `/api/v1/query` and returns
each series' labels and value.

Raises `UsageError` (64) for a URL that is not http(s), `NotAssessedError` (2) when Prometheus
cannot be reached or answers with an error.
"""

from __future__ import annotations

import contextlib
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpurack.errors import NotAssessedError, UsageError

DEFAULT_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Sample:
    """One series of an instant vector."""

    labels: Mapping[str, str]
    value: float


def _endpoint(url: str, promql: str) -> str:
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise UsageError(f"not a Prometheus URL: {url!r} (expected http://HOST:PORT)")
    base = url.rstrip("/")
    return f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"


def _read(endpoint: str, url: str, timeout: float) -> Any:
    try:
        with urllib.request.urlopen(endpoint, timeout=timeout) as answer:  # the scheme is checked above
            return json.loads(answer.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")
        with contextlib.suppress(ValueError, AttributeError):
            detail = json.loads(detail).get("error", detail)
        raise NotAssessedError(f"Prometheus at {url} answered HTTP {exc.code}: {str(detail)[:200]}") from exc
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise NotAssessedError(f"cannot reach Prometheus at {url}: {reason}") from exc
    except ValueError as exc:
        raise NotAssessedError(f"Prometheus at {url} did not answer JSON: {exc}") from exc


def instant_query(url: str, promql: str, timeout: float = DEFAULT_TIMEOUT_S) -> list[Sample]:
    """The instant vector of `promql` at Prometheus `url` (scalars and matrices are refused).

    Raises:
        UsageError: `url` is not an http(s) URL.
        NotAssessedError: unreachable, an HTTP or query error, or an answer that is not a vector.
    """
    body = _read(_endpoint(url, promql), url, timeout)
    if not isinstance(body, dict) or body.get("status") != "success":
        error = body.get("error") if isinstance(body, dict) else body
        raise NotAssessedError(f"Prometheus at {url} refused {promql!r}: {error}")
    data = body.get("data") or {}
    if data.get("resultType") != "vector":
        raise NotAssessedError(f"Prometheus at {url} gave a {data.get('resultType')} for {promql!r}")
    out = []
    for series in data.get("result") or []:
        labels = {str(k): str(v) for k, v in (series.get("metric") or {}).items()}
        try:
            value = float(series["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        out.append(Sample(labels, value))
    return out
