"""k8s_nodes_metadata module: main() end to end against a fake CoreV1Api that lists, reads and
patches Nodes like the API server (raw JSON answers, limit/continue paging, resourceVersion)."""

from __future__ import annotations

import copy
import importlib
import json
import threading
from dataclasses import dataclass
from typing import Any

import kubernetes.client
import kubernetes.config
import pytest
from ansible.module_utils import basic
from ansible.module_utils.common.text.converters import to_bytes
from kubernetes.client.exceptions import ApiException

KUBECONFIG = "/tmp/gpurack-test.conf"
VALIDATING = {"key": "gpurack.io/validating", "effect": "NoSchedule"}


def labels_of(i: int) -> dict[str, str]:
    return {
        "gpurack.io/pool": "h100-train-a",
        "gpurack.io/leaf": f"leaf{i // 32}",
        "node-role.kubernetes.io/gpu": "",
    }


TAINTS = [{"key": "gpurack.io/pool", "value": "h100-train-a", "effect": "NoSchedule"}]


@dataclass
class Raw:
    """What the client returns with _preload_content=False: the body as bytes."""

    data: bytes


class Cluster:
    """Nodes as the API server stores them, the calls made, and the 409s still to answer per Node."""

    def __init__(self, count: int) -> None:
        self.nodes: dict[str, dict[str, Any]] = {
            f"gpu{i:04d}": {
                "metadata": {
                    "name": f"gpu{i:04d}",
                    "resourceVersion": "100",
                    "labels": {"kubernetes.io/hostname": f"gpu{i:04d}"},
                },
                "spec": {"taints": [dict(VALIDATING)]},
            }
            for i in range(count)
        }
        self.calls: list[tuple[str, str, Any]] = []
        self.conflicts: dict[str, int] = {}
        self.lock = threading.Lock()

    def record(self, kind: str, name: str, detail: Any = None) -> None:
        with self.lock:
            self.calls.append((kind, name, copy.deepcopy(detail)))

    def kinds(self, kind: str) -> list[tuple[str, str, Any]]:
        return [c for c in self.calls if c[0] == kind]


class FakeCoreV1Api:
    """list_node / read_node / patch_node answering raw JSON, as with _preload_content=False."""

    cluster = Cluster(0)

    def __init__(self, api_client: Any) -> None:
        self.api_client = api_client

    def list_node(self, *, limit: int, _continue: str | None, _preload_content: bool) -> Raw:
        assert _preload_content is False
        self.cluster.record("list", "", {"limit": limit, "continue": _continue})
        names = sorted(self.cluster.nodes)
        start = int(_continue or 0)
        page = names[start : start + limit]
        more = start + limit < len(names)
        body = {
            "metadata": {"continue": str(start + limit)} if more else {},
            "items": [self.cluster.nodes[n] for n in page],
        }
        return Raw(json.dumps(body).encode())

    def read_node(self, name: str, *, _preload_content: bool) -> Raw:
        self.cluster.record("read", name)
        if name not in self.cluster.nodes:
            raise ApiException(status=404, reason="Not Found")
        return Raw(json.dumps(self.cluster.nodes[name]).encode())

    def patch_node(self, name: str, body: dict[str, Any], *, _preload_content: bool) -> Raw:
        self.cluster.record("patch", name, body)
        with self.cluster.lock:
            stored = self.cluster.nodes[name]
            meta = stored["metadata"]
            if self.cluster.conflicts.get(name):
                # The node lifecycle controller got there first: a new taint and resourceVersion.
                self.cluster.conflicts[name] -= 1
                stored["spec"]["taints"].append(
                    {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}
                )
                meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)
            if body["metadata"]["resourceVersion"] != meta["resourceVersion"]:
                raise ApiException(
                    status=409, reason="Conflict", body='{"message": "the object has been modified"}'
                )
            for part in ("labels", "annotations"):
                merged = meta.setdefault(part, {})
                for key, value in body["metadata"].get(part, {}).items():
                    if value is None:
                        merged.pop(key, None)
                    else:
                        merged[key] = value
            if "spec" in body:
                stored["spec"]["taints"] = copy.deepcopy(body["spec"]["taints"])
            meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)
            return Raw(json.dumps(stored).encode())


def make_cluster(monkeypatch: pytest.MonkeyPatch, count: int) -> Cluster:
    fresh = Cluster(count)
    monkeypatch.setattr(FakeCoreV1Api, "cluster", fresh)

    def new_client_from_config(config_file: str, context: str | None = None) -> kubernetes.client.ApiClient:
        fresh.record("config", config_file, context)
        return kubernetes.client.ApiClient()

    monkeypatch.setattr(kubernetes.config, "new_client_from_config", new_client_from_config)
    monkeypatch.setattr(kubernetes.client, "CoreV1Api", FakeCoreV1Api)
    return fresh


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **args: Any) -> dict[str, Any]:
    """Run k8s_nodes_metadata main() as Ansible would and return its JSON result."""
    args = {"kubeconfig": KUBECONFIG, **args}
    payload = {
        "ANSIBLE_MODULE_ARGS": {"_ansible_remote_tmp": "/tmp", "_ansible_keep_remote_files": False, **args}
    }
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps(payload)))
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy")
    module = importlib.import_module(
        "ansible_collections.gpurack.bootstrap.plugins.modules.k8s_nodes_metadata"
    )
    with pytest.raises(SystemExit):
        module.main()
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def desired(cluster: Cluster, **extra: Any) -> list[dict[str, Any]]:
    return [
        {"name": name, "labels": labels_of(i), "taints": TAINTS, **extra}
        for i, name in enumerate(sorted(cluster.nodes))
    ]


def test_k8s_nodes_metadata_one_paged_list_then_patches_each_node_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = make_cluster(monkeypatch, 1200)  # three LIST pages of 500
    result = _run(monkeypatch, capsys, nodes=desired(cluster), concurrency=8)
    assert result["changed"] is True
    assert "failed" not in result
    assert [c[2] for c in cluster.kinds("list")] == [
        {"limit": 500, "continue": None},
        {"limit": 500, "continue": "500"},
        {"limit": 500, "continue": "1000"},
    ]
    assert (result["lists"], result["patches"], result["conflicts"]) == (3, 1200, 0)
    assert cluster.kinds("read") == []
    patched = cluster.kinds("patch")
    assert sorted(name for _, name, _ in patched) == sorted(cluster.nodes)
    assert all(body["metadata"]["resourceVersion"] == "100" for _, _, body in patched)
    gpu0040 = cluster.nodes["gpu0040"]
    assert gpu0040["metadata"]["labels"] == {"kubernetes.io/hostname": "gpu0040", **labels_of(40)}
    assert gpu0040["metadata"]["annotations"] == {"gpurack.io/managed-labels": "node-role.kubernetes.io/gpu"}
    assert gpu0040["spec"]["taints"] == [VALIDATING, TAINTS[0]]
    assert result["changed_nodes"] == sorted(cluster.nodes)
    assert (result["nodes"], result["unchanged"], result["failed_nodes"]) == (1200, 0, {})
    assert cluster.calls[0] == ("config", KUBECONFIG, None)


def test_k8s_nodes_metadata_patches_only_the_nodes_that_differ(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = make_cluster(monkeypatch, 40)
    nodes = desired(cluster)
    _run(monkeypatch, capsys, nodes=nodes)
    cluster.calls.clear()
    nodes[7]["labels"] = {**nodes[7]["labels"], "gpurack.io/pool": "h200-inference"}
    nodes[30]["validation"] = "pass"
    result = _run(monkeypatch, capsys, nodes=nodes, _ansible_diff=True)
    assert result["changed"] is True
    assert [name for _, name, _ in cluster.kinds("patch")] in (["gpu0007", "gpu0030"], ["gpu0030", "gpu0007"])
    assert len(cluster.kinds("list")) == 1
    assert (result["changed_nodes"], result["unchanged"], result["patches"]) == (
        ["gpu0007", "gpu0030"],
        38,
        2,
    )
    assert set(result["diff"]["before"]) == set(result["diff"]["after"]) == {"gpu0007", "gpu0030"}
    assert result["diff"]["after"]["gpu0007"]["labels"]["gpurack.io/pool"] == "h200-inference"
    pool_taint = "gpurack.io/pool=h100-train-a:NoSchedule"
    assert result["diff"]["before"]["gpu0030"]["taints"] == ["gpurack.io/validating:NoSchedule", pool_taint]
    assert result["diff"]["after"]["gpu0030"]["taints"] == [pool_taint]

    cluster.calls.clear()
    again = _run(monkeypatch, capsys, nodes=nodes)
    assert (again["changed"], again["patches"], again["unchanged"]) == (False, 0, 40)
    assert [kind for kind, _, _ in cluster.calls] == ["config", "list"]


def test_k8s_nodes_metadata_conflict_rereads_and_replans(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = make_cluster(monkeypatch, 3)
    cluster.conflicts = {"gpu0001": 2}
    result = _run(monkeypatch, capsys, nodes=desired(cluster, validation="pass"))
    assert result["changed"] is True
    assert (result["patches"], result["conflicts"]) == (5, 2)
    assert [name for _, name, _ in cluster.kinds("read")] == ["gpu0001", "gpu0001"]
    retries = [body for _, name, body in cluster.kinds("patch") if name == "gpu0001"]
    assert [b["metadata"]["resourceVersion"] for b in retries] == ["100", "101", "102"]
    # The controller's taints, added between our read and our patch, survive the re-plan.
    assert [t["key"] for t in retries[-1]["spec"]["taints"]] == [
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/unreachable",
        "gpurack.io/pool",
    ]


def test_k8s_nodes_metadata_conflict_every_time_fails_that_node_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = make_cluster(monkeypatch, 3)
    cluster.conflicts = {"gpu0002": 10}
    result = _run(monkeypatch, capsys, nodes=desired(cluster), retries=1)
    assert result["failed"] is True
    assert result["failed_nodes"] == {
        "gpu0002": "Could not patch node gpu0002: it changed under us (409 Conflict) 2 times in a row"
    }
    assert result["changed_nodes"] == ["gpu0000", "gpu0001"]
    assert (result["patches"], result["conflicts"]) == (4, 2)


def test_k8s_nodes_metadata_check_mode_patches_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = make_cluster(monkeypatch, 10)
    before = copy.deepcopy(cluster.nodes)
    result = _run(monkeypatch, capsys, nodes=desired(cluster), _ansible_check_mode=True, _ansible_diff=True)
    assert result["changed"] is True
    assert cluster.nodes == before
    assert [kind for kind, _, _ in cluster.calls] == ["config", "list"]
    assert (len(result["changed_nodes"]), result["patches"]) == (10, 0)
    assert result["diff"]["after"]["gpu0000"] == {
        "labels": labels_of(0),
        "taints": ["gpurack.io/validating:NoSchedule", "gpurack.io/pool=h100-train-a:NoSchedule"],
        "annotations": {"gpurack.io/managed-labels": "node-role.kubernetes.io/gpu"},
    }


def test_k8s_nodes_metadata_missing_node_is_reported_and_the_rest_reconciled(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = make_cluster(monkeypatch, 2)
    nodes = [*desired(cluster), {"name": "gpu9999", "labels": labels_of(0)}]
    result = _run(monkeypatch, capsys, nodes=nodes)
    assert result["failed"] is True
    why = f"Node gpu9999 is not in the cluster (kubeconfig {KUBECONFIG}): join it first (playbooks/join.yml)."
    assert result["failed_nodes"] == {"gpu9999": why}
    assert result["msg"] == f"Could not reconcile 1 of 3 Nodes: gpu9999: {why}"
    assert result["changed"] is True
    assert result["changed_nodes"] == ["gpu0000", "gpu0001"]
    assert "exception" not in result
    assert [name for _, name, _ in cluster.kinds("patch")] in (["gpu0000", "gpu0001"], ["gpu0001", "gpu0000"])


def test_k8s_nodes_metadata_refuses_bad_input_before_calling_api(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = make_cluster(monkeypatch, 1)
    nodes = [
        {"name": "gpu0000", "taints": [{"key": "gpurack.io/validating", "effect": "NoSchedule"}]},
        {"name": "gpu0000", "labels": {"gpurack.io/pool": "no spaces"}},
    ]
    result = _run(monkeypatch, capsys, nodes=nodes)
    assert result["failed"] is True
    assert "node gpu0000: taints[0]: gpurack.io/validating follows the validation verdict" in result["msg"]
    assert "node gpu0000 is listed twice" in result["msg"]
    assert "label value 'no spaces'" in result["msg"]
    assert cluster.calls == []


def test_k8s_nodes_metadata_null_label_is_left_as_it_is(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = make_cluster(monkeypatch, 1)
    cluster.nodes["gpu0000"]["metadata"]["labels"]["gpurack.io/leaf"] = "leaf7"
    result = _run(monkeypatch, capsys, nodes=[{"name": "gpu0000", "labels": {"gpurack.io/leaf": None}}])
    assert (result["changed"], result["patches"]) == (False, 0)


def test_k8s_nodes_metadata_list_error_fails_with_status_and_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    make_cluster(monkeypatch, 1)

    def forbidden(self: FakeCoreV1Api, **_: Any) -> Raw:
        raise ApiException(status=403, reason="Forbidden", body='{"message": "nodes is forbidden"}')

    monkeypatch.setattr(FakeCoreV1Api, "list_node", forbidden)
    result = _run(monkeypatch, capsys, nodes=[{"name": "gpu0000"}])
    assert result["failed"] is True
    assert result["msg"] == (
        f"Could not list the Nodes: HTTP 403 Forbidden: nodes is forbidden (kubeconfig {KUBECONFIG})"
    )
