# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The Kubernetes API as the Node modules use it: the client from a kubeconfig and what the API
server said, as one line (stdlib only at import: the client is imported when asked for)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


class KubeconfigError(Exception):
    """The kubeconfig could not be loaded; the message names it and says why."""


@dataclass(frozen=True, slots=True)
class KubeClient:
    """A CoreV1Api on one cluster, and the client's exceptions to catch around its calls."""

    api_client: Any
    core: Any
    api_exception: type[Exception]
    http_error: type[Exception]


def core_v1(kubeconfig: str, context: str | None = None, pool_size: int | None = None) -> KubeClient:
    """A CoreV1Api on the cluster of `kubeconfig` (its `context`, or the current one).

    `pool_size`: how many connections to keep to the API server, for that many calls at once
    (the client keeps 5 per CPU otherwise, and drops what does not fit back in its pool).

    Raises:
        ImportError: the kubernetes Python client is not installed.
        KubeconfigError: the kubeconfig is missing, unreadable or has no such context.
    """
    # Imported here so that a module's documentation and argument checks work without the client.
    import kubernetes.client  # noqa: PLC0415
    import kubernetes.config  # noqa: PLC0415
    import urllib3  # noqa: PLC0415  (a dependency of kubernetes)

    try:
        client = kubernetes.config.new_client_from_config(config_file=kubeconfig, context=context)  # type: ignore[no-untyped-call]
    except (kubernetes.config.ConfigException, OSError, ValueError) as exc:
        raise KubeconfigError(f"Could not load kubeconfig {kubeconfig}: {exc}") from exc
    if pool_size:
        client.configuration.connection_pool_maxsize = pool_size
        client.rest_client = kubernetes.client.rest.RESTClientObject(client.configuration)
    return KubeClient(
        api_client=client,
        core=kubernetes.client.CoreV1Api(client),
        api_exception=kubernetes.client.exceptions.ApiException,
        http_error=urllib3.exceptions.HTTPError,
    )


def api_error_text(exc: Any) -> str:
    """HTTP status, reason and the API server's message of a kubernetes client ApiException."""
    text = f"HTTP {exc.status} {exc.reason}"
    try:
        message = json.loads(exc.body or "{}").get("message")
    except (ValueError, AttributeError):
        message = None
    return f"{text}: {message}" if message else text


def missing_node_text(name: str, kubeconfig: str) -> str:
    """What to say when Node `name` is not in the cluster."""
    return f"Node {name} is not in the cluster (kubeconfig {kubeconfig}): join it first (playbooks/join.yml)."
