"""`gpurack queue`'s fetcher: the three Kueue kinds read cluster wide, and its failures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kueue_objects as k
import pytest
from gpurack import queue
from gpurack.errors import NotAssessedError, UsageError
from gpurack.queue import fetch


def test_fetch_missing_kubeconfig_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="kubeconfig not found"):
        fetch(tmp_path / "nope.conf")


def test_fetch_unreachable_api_server_is_not_assessed(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    with pytest.raises(NotAssessedError, match="cannot reach the cluster of"):
        fetch(kubeconfig)


def test_fetch_lists_the_three_kinds_cluster_wide(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[tuple[str, str, str]] = []

    class Api:
        def list_cluster_custom_object(
            self, group: str, version: str, plural: str, **_: Any
        ) -> dict[str, Any]:
            calls.append((group, version, plural))
            return {
                "items": {"clusterqueues": k.cluster_queues(), "localqueues": [], "workloads": []}[plural]
            }

    monkeypatch.setattr(queue.fetch_module, "_client", lambda path: Api())
    objects = fetch(tmp_path / "kubeconfig")
    assert [c[2] for c in calls] == ["clusterqueues", "localqueues", "workloads"]
    assert {c[:2] for c in calls} == {("kueue.x-k8s.io", "v1beta2")}
    assert [cq["metadata"]["name"] for cq in objects.cluster_queues] == ["alpha", "beta"]


def test_fetch_api_error_404_says_kueue_is_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from kubernetes.client.exceptions import ApiException

    class Api:
        def list_cluster_custom_object(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            raise ApiException(status=404, reason="Not Found")

    monkeypatch.setattr(queue.fetch_module, "_client", lambda path: Api())
    with pytest.raises(NotAssessedError, match="is Kueue installed"):
        fetch(tmp_path / "kubeconfig")
