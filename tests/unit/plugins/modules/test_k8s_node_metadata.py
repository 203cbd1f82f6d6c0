"""k8s_node_metadata module: main() end to end against a fake CoreV1Api that patches like the API server."""

from __future__ import annotations

import copy
import importlib
import json
import sys
from typing import Any

import kubernetes.client
import kubernetes.config
import pytest
from ansible.module_utils import basic
from ansible.module_utils.common.text.converters import to_bytes
from kubernetes.client.exceptions import ApiException

KUBECONFIG = "/tmp/gpurack-test.conf"
LABELS = {
    "gpurack.io/pool": "h200-train-a",
    "gpurack.io/fabric": "infiniband",
    "node-role.kubernetes.io/gpu": "",
}
TAINTS = [{"key": "gpurack.io/reserved", "value": "research", "effect": "NoSchedule"}]
UNREACHABLE = {
    "key": "node.kubernetes.io/unreachable",
    "effect": "NoExecute",
    "timeAdded": "2026-01-01T00:00:00Z",
}


class Cluster:
    """Nodes as the API server stores them, plus the calls made and the 409s still to answer."""

    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, Any]] = {
            "gpu01": {
                "metadata": {
                    "name": "gpu01",
                    "resourceVersion": "100",
                    "labels": {"kubernetes.io/hostname": "gpu01"},
                },
                "spec": {"taints": [{"key": "gpurack.io/validating", "effect": "NoSchedule"}]},
            }
        }
        self.calls: list[tuple[str, str, Any]] = []
        self.conflicts = 0
        self.error: ApiException | None = None

    def bump(self, name: str) -> None:
        meta = self.nodes[name]["metadata"]
        meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)


class FakeCoreV1Api:
    """read_node / patch_node with strategic-merge semantics for labels, annotations and taints."""

    cluster = Cluster()

    def __init__(self, api_client: Any) -> None:
        self.api_client = api_client

    def _node(self, name: str) -> kubernetes.client.V1Node:
        if self.cluster.error is not None:
            raise self.cluster.error
        if name not in self.cluster.nodes:
            raise ApiException(status=404, reason="Not Found")
        return kubernetes.client.V1Node.from_dict(copy.deepcopy(self.cluster.nodes[name]))

    def read_node(self, name: str) -> kubernetes.client.V1Node:
        self.cluster.calls.append(("read", name, None))
        return self._node(name)

    def patch_node(self, name: str, body: dict[str, Any]) -> kubernetes.client.V1Node:
        self.cluster.calls.append(("patch", name, copy.deepcopy(body)))
        stored = self.cluster.nodes[name]
        if self.cluster.conflicts:
            # The node lifecycle controller got there first: a new taint and a new resourceVersion.
            self.cluster.conflicts -= 1
            stored["spec"]["taints"].append(UNREACHABLE)
            self.cluster.bump(name)
        if body["metadata"]["resourceVersion"] != stored["metadata"]["resourceVersion"]:
            raise ApiException(
                status=409, reason="Conflict", body='{"message": "the object has been modified"}'
            )
        for part in ("labels", "annotations"):
            merged = stored["metadata"].setdefault(part, {})
            for key, value in body["metadata"].get(part, {}).items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
        if "spec" in body:
            stored["spec"]["taints"] = copy.deepcopy(body["spec"]["taints"])
        self.cluster.bump(name)
        return self._node(name)

    def patch_node_status(self, name: str, body: dict[str, Any]) -> kubernetes.client.V1Node:
        """A strategic merge patch of status.conditions, which merge by type."""
        self.cluster.calls.append(("patch_status", name, copy.deepcopy(body)))
        conditions = self.cluster.nodes[name].setdefault("status", {}).setdefault("conditions", [])
        for new in body["status"]["conditions"]:
            kept = [c for c in conditions if c["type"] != new["type"]]
            conditions[:] = [*kept, copy.deepcopy(new)]
        self.cluster.bump(name)
        return self._node(name)


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Cluster:
    """A fresh fake cluster behind kubernetes.config and CoreV1Api."""
    fresh = Cluster()
    monkeypatch.setattr(FakeCoreV1Api, "cluster", fresh)

    def new_client_from_config(config_file: str, context: str | None = None) -> kubernetes.client.ApiClient:
        fresh.calls.append(("config", config_file, context))
        return kubernetes.client.ApiClient()

    monkeypatch.setattr(kubernetes.config, "new_client_from_config", new_client_from_config)
    monkeypatch.setattr(kubernetes.client, "CoreV1Api", FakeCoreV1Api)
    return fresh


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **args: Any) -> dict[str, Any]:
    """Run k8s_node_metadata main() as Ansible would and return its JSON result."""
    args = {"kubeconfig": KUBECONFIG, "name": "gpu01", **args}
    payload = {
        "ANSIBLE_MODULE_ARGS": {"_ansible_remote_tmp": "/tmp", "_ansible_keep_remote_files": False, **args}
    }
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps(payload)))
    # ansible-core 2.19 also needs the serialization profile the controller would have sent.
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy")
    module = importlib.import_module(
        "ansible_collections.gpurack.bootstrap.plugins.modules.k8s_node_metadata"
    )
    with pytest.raises(SystemExit):
        module.main()
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def _kinds(cluster: Cluster) -> list[str]:
    return [kind for kind, _, _ in cluster.calls if kind != "config"]


def test_k8s_node_metadata_sets_labels_and_taints_then_unchanged(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cluster: Cluster
) -> None:
    first = _run(monkeypatch, capsys, labels=LABELS, taints=TAINTS)
    assert first["changed"] is True
    assert "failed" not in first
    assert first["labels"] == {"kubernetes.io/hostname": "gpu01", **LABELS}
    assert first["taints"] == [
        {"key": "gpurack.io/validating", "value": "", "effect": "NoSchedule"},
        {"key": "gpurack.io/reserved", "value": "research", "effect": "NoSchedule"},
    ]
    assert first["annotations"] == {"gpurack.io/managed-labels": "node-role.kubernetes.io/gpu"}
    [(_, _, body)] = [c for c in cluster.calls if c[0] == "patch"]
    assert body["metadata"]["resourceVersion"] == "100"
    assert cluster.calls[0] == ("config", KUBECONFIG, None)

    assert first["ansible_facts"] == {"gpurack_node_metadata_changed": True}  # validate reads again

    second = _run(monkeypatch, capsys, labels=LABELS, taints=TAINTS)
    assert second["changed"] is False
    assert "ansible_facts" not in second  # an earlier change in the run is not taken back
    assert second["labels"] == first["labels"]
    assert _kinds(cluster) == ["read", "patch", "read"]


def test_k8s_node_metadata_check_mode_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cluster: Cluster
) -> None:
    before = copy.deepcopy(cluster.nodes)
    result = _run(
        monkeypatch, capsys, labels=LABELS, validation="pass", _ansible_check_mode=True, _ansible_diff=True
    )
    assert result["changed"] is True
    assert cluster.nodes == before
    assert _kinds(cluster) == ["read"]
    assert result["taints"] == []
    assert result["diff"]["before"]["taints"] == ["gpurack.io/validating:NoSchedule"]
    assert result["diff"]["after"] == {
        "labels": LABELS,
        "taints": [],
        "annotations": {"gpurack.io/managed-labels": "node-role.kubernetes.io/gpu"},
    }


def test_k8s_node_metadata_conflict_rereads_and_replans(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cluster: Cluster
) -> None:
    cluster.conflicts = 1
    result = _run(monkeypatch, capsys, labels=LABELS, validation="pass")
    assert result["changed"] is True
    assert _kinds(cluster) == ["read", "patch", "read", "patch"]
    retry = cluster.calls[-1][2]
    assert retry["metadata"]["resourceVersion"] == "101"
    # The controller's taint, added between our read and our patch, survives the retry.
    assert [t["key"] for t in retry["spec"]["taints"]] == ["node.kubernetes.io/unreachable"]
    assert retry["spec"]["taints"][0]["timeAdded"] == "2026-01-01T00:00:00+00:00"
    assert [t["key"] for t in result["taints"]] == ["node.kubernetes.io/unreachable"]


def test_k8s_node_metadata_conflict_every_time_fails_after_retries(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cluster: Cluster
) -> None:
    cluster.conflicts = 10
    result = _run(monkeypatch, capsys, labels=LABELS, retries=2)
    assert result["failed"] is True
    assert result["msg"] == (
        f"Could not patch node gpu01 (kubeconfig {KUBECONFIG}): "
        "it changed under us (409 Conflict) 3 times in a row"
    )
    assert _kinds(cluster) == ["read", "patch"] * 3


def test_k8s_node_metadata_missing_node_says_join_first(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cluster: Cluster
) -> None:
    result = _run(monkeypatch, capsys, name="gpu02", labels=LABELS)
    assert result["failed"] is True
    assert result["msg"] == (
        f"Node gpu02 is not in the cluster (kubeconfig {KUBECONFIG}): join it first (playbooks/join.yml)."
    )


def test_k8s_node_metadata_api_error_fails_with_status_and_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cluster: Cluster
) -> None:
    cluster.error = ApiException(
        status=403, reason="Forbidden", body='{"message": "nodes \\"gpu01\\" is forbidden"}'
    )
    result = _run(monkeypatch, capsys, labels=LABELS)
    assert result["failed"] is True
    assert result["msg"] == (
        f'Could not read node gpu01 (kubeconfig {KUBECONFIG}): HTTP 403 Forbidden: nodes "gpu01" is forbidden'
    )
    assert (result["status"], result["reason"]) == (403, "Forbidden")
    assert "exception" not in result


def test_k8s_node_metadata_validation_fail_sets_reason_annotation(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cluster: Cluster
) -> None:
    cluster.nodes["gpu01"]["spec"]["taints"] = []
    result = _run(
        monkeypatch, capsys, validation="fail", validation_reason="gpu.count: 1 GPUs found, expected 8"
    )
    assert result["changed"] is True
    assert result["taints"] == [{"key": "gpurack.io/validating", "value": "", "effect": "NoSchedule"}]
    assert result["annotations"] == {"gpurack.io/validation-failed": "gpu.count: 1 GPUs found, expected 8"}


def test_k8s_node_metadata_refuses_desired_validating_taint_before_calling_api(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cluster: Cluster
) -> None:
    result = _run(monkeypatch, capsys, taints=[{"key": "gpurack.io/validating", "effect": "NoSchedule"}])
    assert result["failed"] is True
    assert "gpurack.io/validating follows the validation verdict" in result["msg"]
    assert cluster.calls == []


def test_k8s_node_metadata_bad_kubeconfig_fails_with_path(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cluster: Cluster
) -> None:
    def broken(config_file: str, context: str | None = None) -> None:
        raise kubernetes.config.ConfigException("Invalid kube-config file. No configuration found.")

    monkeypatch.setattr(kubernetes.config, "new_client_from_config", broken)
    result = _run(monkeypatch, capsys, labels=LABELS, context="other")
    assert result["failed"] is True
    assert (
        result["msg"]
        == f"Could not load kubeconfig {KUBECONFIG}: Invalid kube-config file. No configuration found."
    )


def test_k8s_node_metadata_without_kubernetes_client_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "kubernetes", None)
    result = _run(monkeypatch, capsys, labels=LABELS)
    assert result["failed"] is True
    assert "Failed to import the required Python library (kubernetes)" in result["msg"]


READY = {
    "type": "Ready",
    "status": "True",
    "reason": "KubeletReady",
    "message": "kubelet is posting ready status",
    "lastHeartbeatTime": "2026-01-01T00:00:00Z",
    "lastTransitionTime": "2026-01-01T00:00:00Z",
}


def _condition(cluster: Cluster, kind: str = "GpurackValidated") -> dict[str, Any]:
    [found] = [c for c in cluster.nodes["gpu01"]["status"]["conditions"] if c["type"] == kind]
    return found


def test_k8s_node_metadata_condition_follows_validation_and_is_idempotent(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cluster: Cluster
) -> None:
    cluster.nodes["gpu01"]["status"] = {"conditions": [READY]}
    reason = "gpu.count: 1 GPUs found, expected 8"
    failed = _run(monkeypatch, capsys, validation="fail", validation_reason=reason, condition=True)
    assert failed["changed"] is True
    stored = _condition(cluster)
    assert {k: stored[k] for k in ("status", "reason", "message")} == {
        "status": "False",
        "reason": "ChecksFailed",
        "message": reason,
    }
    assert failed["condition"]["lastTransitionTime"] == stored["lastTransitionTime"]
    # The kubelet's condition is untouched; the taint and the annotation are set as before.
    assert _condition(cluster, "Ready") == READY
    assert failed["annotations"] == {"gpurack.io/validation-failed": reason}
    [(_, _, body)] = [c for c in cluster.calls if c[0] == "patch_status"]
    assert [c["type"] for c in body["status"]["conditions"]] == ["GpurackValidated"]

    cluster.calls.clear()
    again = _run(monkeypatch, capsys, validation="fail", validation_reason=reason, condition=True)
    assert again["changed"] is False
    assert _kinds(cluster) == ["read"]
    assert again["condition"]["lastHeartbeatTime"] == stored["lastHeartbeatTime"]

    # A pass makes it True; the time moved, so the transition time is the new heartbeat's.
    cluster.nodes["gpu01"]["status"]["conditions"] = [
        READY,
        {**stored, "lastTransitionTime": "2026-01-02T00:00:00Z", "lastHeartbeatTime": "2026-01-02T00:00:00Z"},
    ]
    passed = _run(monkeypatch, capsys, validation="pass", condition=True)
    assert passed["changed"] is True
    now = _condition(cluster)
    assert (now["status"], now["reason"]) == ("True", "ChecksPassed")
    assert now["lastTransitionTime"] == now["lastHeartbeatTime"] != "2026-01-02T00:00:00Z"
    assert passed["taints"] == []
    assert passed["annotations"] == {}


def test_k8s_node_metadata_condition_check_mode_shows_it_and_writes_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cluster: Cluster
) -> None:
    result = _run(
        monkeypatch,
        capsys,
        validation="fail",
        validation_reason="nvlink.count: 12 links, expected 18",
        condition=True,
        _ansible_check_mode=True,
        _ansible_diff=True,
    )
    assert result["changed"] is True
    assert _kinds(cluster) == ["read"]
    assert "status" not in cluster.nodes["gpu01"]
    assert result["diff"]["before"]["condition"] is None
    assert result["diff"]["after"]["condition"] == {
        "type": "GpurackValidated",
        "status": "False",
        "reason": "ChecksFailed",
        "message": "nvlink.count: 12 links, expected 18",
    }


def test_k8s_node_metadata_condition_unknown_leaves_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cluster: Cluster
) -> None:
    mine = {"type": "GpurackValidated", "status": "True", "reason": "ChecksPassed", "message": "ok"}
    cluster.nodes["gpu01"]["status"] = {"conditions": [mine]}
    result = _run(monkeypatch, capsys, condition=True)
    assert result["changed"] is False
    assert result["condition"] == mine
    assert _kinds(cluster) == ["read"]


def test_k8s_node_metadata_null_label_is_left_as_it_is(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cluster: Cluster
) -> None:
    # A cabled node whose leaf this run's fabric read did not see: its topology label stays.
    cluster.nodes["gpu01"]["metadata"]["labels"]["network.topology.nvidia.com/leaf"] = "leaf7"
    result = _run(monkeypatch, capsys, labels={"network.topology.nvidia.com/leaf": None})
    assert "failed" not in result, result.get("msg")
    assert result["labels"]["network.topology.nvidia.com/leaf"] == "leaf7"
    assert result["annotations"] == {"gpurack.io/managed-labels": "network.topology.nvidia.com/leaf"}
