"""gpurack run records what each host showed: the preflight playbook over a capture replay."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from cli_helpers import invoke


def _inventory(tmp_path: Path, capture: Path) -> Path:
    # localhost replays the real H200 capture through the facts modules' `root` parameter,
    # the way the lab hands sysfs and command captures to its hosts.
    inventory = {
        "all": {
            "hosts": {
                "localhost": {
                    "ansible_connection": "local",
                    "ansible_python_interpreter": sys.executable,
                    "preflight_facts_root": str(capture),
                    "gpurack_pool": {"name": "h200-infer", "workload": "inference", "sharing": "full-gpu"},
                    "gpurack_expect": {"gpu": {"count": 1, "model": "NVIDIA H200"}, "numa_nodes": 1},
                }
            }
        }
    }
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(inventory))
    return path


def test_run_preflight_records_host_facts_labels_and_verdicts(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    result = invoke(
        capsys,
        "run",
        "preflight",
        "-i",
        _inventory(tmp_path, h200x1),
        "-e",
        "gpurack_hosts=localhost",
        "--json",
    )
    assert result.code == 0, result.out + result.err

    shown = json.loads(invoke(capsys, "inventory", "show", "localhost", "--json").out)
    assert shown["pool"] == "h200-infer"
    assert shown["labels"]["gpurack.io/accelerator"] == "h200-141gb"
    assert shown["labels"]["gpurack.io/workload"] == "inference"
    assert [g["serial"] for g in shown["gpus"]] == ["1654924064277"]
    verdicts = {r["id"]: r["verdict"] for r in shown["results"]}
    assert verdicts["gpu.count"] == "pass"


def test_run_no_record_keeps_inventory_empty(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    inventory = _inventory(tmp_path, h200x1)
    result = invoke(
        capsys, "run", "preflight", "-i", inventory, "-e", "gpurack_hosts=localhost", "--no-record", "--json"
    )
    assert result.code == 0, result.out + result.err
    listing = invoke(capsys, "inventory", "list", "--json")
    assert (listing.code, listing.out) == (64, "")  # no inventory was even created
    assert "no inventory database at" in listing.err


def test_run_with_a_corrupt_db_keeps_its_exit_code_and_warns_once(
    capsys: pytest.CaptureFixture[str], h200x1: Path, tmp_path: Path
) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    inventory = _inventory(tmp_path, h200x1)
    result = invoke(
        capsys, "run", "preflight", "-i", inventory, "-e", "gpurack_hosts=localhost", "--db", junk, "--json"
    )
    assert result.code == 0, result.out + result.err
    assert json.loads(result.out)["status"] == "successful"
    assert result.err == (
        f"gpurack: warning: not recorded in the inventory: cannot open inventory database sqlite:///{junk}: "
        "file is not a database\n"
    )


def test_run_bad_db_url_exits_64_before_running(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    result = invoke(capsys, "run", "preflight", "-i", tmp_path / "absent.yml", "--db", "sqlite://u:pw@/x.db")
    assert (result.code, result.out) == (64, "")
    assert "names a user or a host" in result.err and ":pw@" not in result.err
    assert not (tmp_path / "gpurack-state" / "runs").exists()


def _write_events(artifact_dir: Path, events: list[dict[str, object]]) -> None:
    """Job events as ansible-runner writes them: artifacts/<ident>/job_events/<counter>-<uuid>.json."""
    folder = artifact_dir / "artifacts" / "ident" / "job_events"
    folder.mkdir(parents=True)
    for counter, event in enumerate(events, start=1):
        (folder / f"{counter}-uuid{counter}.json").write_text(json.dumps(event))


def _ok(host: str, action: str, res: dict[str, object]) -> dict[str, object]:
    return {
        "event": "runner_on_ok",
        "event_data": {"host": host, "task_action": action, "resolved_action": action, "res": res},
    }


def _metadata_event(host: str, node: str) -> dict[str, object]:
    # What roles/node_labels/tasks/apply.yml's k8s_node_metadata task returns (delegated to
    # localhost, the event still names the inventory host it ran for).
    res = {"changed": True, "node": node, "labels": {}, "taints": [], "annotations": {}}
    return _ok(host, "gpurack.bootstrap.k8s_node_metadata", res)


def test_run_records_the_kubernetes_node_name_the_join_labelled(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from gpurack import harvest
    from inventory_helpers import capture_facts

    facts = capture_facts()
    gpu = {"gpurack_gpu": facts["gpurack_gpu"]}
    artifacts = tmp_path / "run"
    _write_events(
        artifacts,
        [
            _ok("gpu01", "gpurack.bootstrap.gpu_facts", {"ansible_facts": gpu}),
            _metadata_event("gpu01", "gpu01.cluster.example"),
            # Another module's `node` value is no Kubernetes node name.
            _ok("gpu01", "ansible.builtin.set_fact", {"node": "not-a-node"}),
        ],
    )
    assert [r.k8s_node_name for r in harvest.harvest(artifacts)] == ["gpu01.cluster.example"]
    assert harvest.record_run(artifacts, "site.yml", "successful", None) is not None

    shown = json.loads(invoke(capsys, "inventory", "show", "gpu01", "--json").out)
    assert shown["k8s_node_name"] == "gpu01.cluster.example"
    listed = invoke(capsys, "inventory", "show", "gpu01").out
    assert "k8s node gpu01.cluster.example" in listed


def test_run_that_only_labels_a_known_host_still_records_its_node_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from gpurack import harvest
    from inventory_helpers import capture_facts

    facts = {"gpurack_gpu": capture_facts()["gpurack_gpu"]}
    first, second = tmp_path / "first", tmp_path / "second"
    _write_events(first, [_ok("gpu01", "gpurack.bootstrap.gpu_facts", {"ansible_facts": facts})])
    _write_events(second, [_metadata_event("gpu01", "gpu01"), _metadata_event("stranger", "stranger")])
    harvest.record_run(first, "preflight.yml", "successful", None)

    assert harvest.record_run(second, "join.yml", "successful", None) is None
    listed = json.loads(invoke(capsys, "inventory", "list", "--json").out)
    assert [(n["host"], n["k8s_node_name"]) for n in listed] == [("gpu01", "gpu01")]
