"""The lab cluster's Kubernetes nodes as `gpurack lab status` shows them (kubernetes client)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

PREFIX = "gpurack.io/"


@dataclass(frozen=True, slots=True)
class NodeRow:
    """One Node: readiness, version, its gpurack labels, taints and GPUs."""

    name: str
    ready: bool
    version: str
    labels: dict[str, str]
    taints: tuple[str, ...]
    gpus: str


def read(kubeconfig: Path) -> list[NodeRow] | str:
    """The cluster's nodes, or why they cannot be read (no kubeconfig yet, API unreachable)."""
    if not kubeconfig.is_file():
        return f"no kubeconfig yet ({kubeconfig}): run 'gpurack run site -i lab/inventory'"
    # Imported on use: the client takes a second to import, and only this command needs it.
    from kubernetes import client, config  # noqa: PLC0415
    from kubernetes.client.exceptions import ApiException  # noqa: PLC0415
    from urllib3.exceptions import HTTPError  # noqa: PLC0415

    try:
        api = client.CoreV1Api(config.new_client_from_config(config_file=str(kubeconfig)))  # type: ignore[no-untyped-call]
        # Typed loosely: the client's models make every field Optional.
        items: list[Any] = api.list_node(_request_timeout=10).items
    except (ApiException, HTTPError, OSError, config.ConfigException) as exc:
        return f"cannot list the nodes with {kubeconfig}: {exc}"
    rows = []
    for node in sorted(items, key=lambda n: n.metadata.name):
        conditions = node.status.conditions or []
        rows.append(
            NodeRow(
                name=node.metadata.name,
                ready=any(c.type == "Ready" and c.status == "True" for c in conditions),
                version=node.status.node_info.kubelet_version if node.status.node_info else "?",
                labels={
                    k.removeprefix(PREFIX): v
                    for k, v in (node.metadata.labels or {}).items()
                    if k.startswith(PREFIX)
                },
                taints=tuple(
                    f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}" for t in node.spec.taints or []
                ),
                gpus=(node.status.allocatable or {}).get("nvidia.com/gpu", "-"),
            )
        )
    return rows
