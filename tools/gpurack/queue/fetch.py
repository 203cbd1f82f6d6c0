"""Read Kueue's queues and workloads from the cluster: the only module of `gpurack.queue` with I/O.

The `kubernetes` client's CustomObjectsApi lists ClusterQueues, LocalQueues and Workloads
(kueue.x-k8s.io/v1beta2) cluster-wide; the objects stay plain dicts for `gpurack.queue.model`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.node import api_error_text

from gpurack.errors import NotAssessedError, UsageError

GROUP = "kueue.x-k8s.io"
VERSION = "v1beta2"
PLURALS = ("clusterqueues", "localqueues", "workloads")
REQUEST_TIMEOUT_S = 15


@dataclass(frozen=True, slots=True)
class KueueObjects:
    """What the API gave, as dicts: `items` of each list."""

    cluster_queues: tuple[dict[str, Any], ...]
    local_queues: tuple[dict[str, Any], ...]
    workloads: tuple[dict[str, Any], ...]


# The kubernetes client is imported where it is used: it costs most of a second, and every
# other gpurack verb would pay for it at start-up.


def _client(kubeconfig: Path) -> Any:
    import kubernetes.client  # noqa: PLC0415
    import kubernetes.config  # noqa: PLC0415

    if not kubeconfig.is_file():
        raise UsageError(
            f"kubeconfig not found: {kubeconfig} (give --kubeconfig, or gpurack_kubeconfig in -i)"
        )
    try:
        api = kubernetes.config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]
    except (kubernetes.config.ConfigException, OSError, ValueError) as exc:
        raise UsageError(f"cannot load kubeconfig {kubeconfig}: {exc}") from exc
    return kubernetes.client.CustomObjectsApi(api)


def _list(api: Any, plural: str, kubeconfig: Path) -> tuple[dict[str, Any], ...]:
    import kubernetes.client  # noqa: PLC0415
    import urllib3  # noqa: PLC0415  (a dependency of kubernetes)

    try:
        answer = api.list_cluster_custom_object(GROUP, VERSION, plural, _request_timeout=REQUEST_TIMEOUT_S)
    except kubernetes.client.exceptions.ApiException as exc:
        if exc.status == 404:
            raise NotAssessedError(
                f"the cluster of {kubeconfig} does not serve {GROUP}/{VERSION} {plural}: is Kueue installed?"
            ) from exc
        raise NotAssessedError(f"cannot list {plural} ({kubeconfig}): {api_error_text(exc)}") from exc
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise NotAssessedError(f"cannot reach the cluster of {kubeconfig}: {exc}") from exc
    items = answer.get("items") if isinstance(answer, dict) else None
    return tuple(item for item in items or [] if isinstance(item, dict))


def fetch(kubeconfig: Path) -> KueueObjects:
    """Every ClusterQueue, LocalQueue and Workload the cluster of `kubeconfig` holds.

    Raises:
        UsageError: (64) no kubeconfig there, or one that cannot be loaded.
        NotAssessedError: (2) the API server cannot be reached, refuses, or does not serve Kueue.
    """
    api = _client(kubeconfig)
    cqs, lqs, wls = (_list(api, plural, kubeconfig) for plural in PLURALS)
    return KueueObjects(cqs, lqs, wls)
