"""A patch run's `gpurack_patch` facts, read from ansible-runner's job events: the last one set
on each host counts, garbled values are read as far as they can be, and the fact is an
outcome, never part of the host's hardware snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gpurack import harvest
from gpurack.inventory import PatchRecord, open_store
from inventory_helpers import capture_facts

SET_FACT = "ansible.builtin.set_fact"
# The fact as playbooks/patch.yml sets it at the end of a node's work (every key present).
PATCHED: dict[str, Any] = {
    "outcome": "patched",
    "reason": "",
    "node": "lab-w1",
    "drain_s": 12.3,
    "update_s": 40.1,
    "reboot_s": 35.0,
    "validation_s": 20.2,
    "kernel_before": "6.1.0-41-amd64",
    "kernel_after": "6.1.0-42-amd64",
    "driver_before": "580.95.05",
    "driver_after": "580.105.08",
    "rebooted": True,
    "validation": "pass",
    "run": "awx-1234",
}
HELD: dict[str, Any] = {
    **PATCHED,
    "outcome": "held",
    "reason": "drain did not finish within 600 s",
    "update_s": None,
    "reboot_s": None,
    "validation_s": None,
    "kernel_after": "6.1.0-41-amd64",
    "driver_after": "580.95.05",
    "rebooted": False,
    "validation": "",
}


def _write_events(artifact_dir: Path, events: list[dict[str, Any]]) -> None:
    """Job events as ansible-runner writes them: artifacts/<ident>/job_events/<counter>-<uuid>.json."""
    folder = artifact_dir / "artifacts" / "ident" / "job_events"
    folder.mkdir(parents=True)
    for counter, event in enumerate(events, start=1):
        (folder / f"{counter}-uuid{counter}.json").write_text(json.dumps(event))


def _ok(host: str, res: dict[str, Any], action: str = SET_FACT) -> dict[str, Any]:
    return {
        "event": "runner_on_ok",
        "event_data": {"host": host, "task_action": action, "resolved_action": action, "res": res},
    }


def _patch(host: str, fact: Any) -> dict[str, Any]:
    return _ok(host, {"ansible_facts": {"gpurack_patch": fact}, "changed": False})


def test_patch_outcomes_keep_the_last_fact_of_each_host(tmp_path: Path) -> None:
    _write_events(
        tmp_path,
        [
            _patch("gpu02", HELD),
            _patch("gpu01", HELD),  # an earlier try on gpu01, replaced by its `always:` below
            {"event": "runner_on_failed", "event_data": {"host": "gpu01", "res": {"msg": "drain"}}},
            _patch("gpu01", PATCHED),
        ],
    )
    found = harvest.patch_outcomes(tmp_path)
    assert [(p.host, p.outcome) for p in found] == [("gpu01", "patched"), ("gpu02", "held")]
    assert found[0] == PatchRecord(
        host="gpu01", outcome="patched", node="lab-w1", reason=None, drain_s=12.3, update_s=40.1,
        reboot_s=35.0, validation_s=20.2, kernel_before="6.1.0-41-amd64", kernel_after="6.1.0-42-amd64",
        driver_before="580.95.05", driver_after="580.105.08", rebooted=True, validation="pass",
        maintenance_run="awx-1234",
    )  # fmt: skip
    assert found[1].reason == "drain did not finish within 600 s"
    assert (found[1].update_s, found[1].rebooted, found[1].validation) == (None, False, None)


def test_patch_fact_numbers_and_booleans_sent_as_text_are_read() -> None:
    fact = {**PATCHED, "drain_s": "12.3", "update_s": " 40 ", "reboot_s": "None", "rebooted": "True"}
    record = harvest.patch_record("gpu01", {**fact, "validation": "PASS", "outcome": " Held "})
    assert (record.drain_s, record.update_s, record.reboot_s) == (12.3, 40.0, None)
    assert (record.rebooted, record.validation, record.outcome) == (True, "pass", "held")
    assert harvest.patch_record("gpu01", {**fact, "rebooted": "no"}).rebooted is False
    # The whole fact passed through `to_json` on the way.
    assert harvest.patch_record("gpu01", json.dumps(PATCHED)).outcome == "patched"


@pytest.mark.parametrize(
    "fact",
    [
        None,
        "garbage",
        "{not json",
        ["patched"],
        42,
        {},
        {"outcome": "rebooting", "drain_s": "fast", "update_s": -1, "reboot_s": float("nan"),
         "validation_s": "1e999", "kernel_before": ["6.1"], "kernel_after": {"v": 1}, "driver_before": True,
         "rebooted": "perhaps", "validation": "great", "node": "", "reason": None, "run": 10**5000},
    ],
)  # fmt: skip
def test_patch_fact_garbled_reads_what_it_can_and_never_raises(fact: Any) -> None:
    record = harvest.patch_record("gpu01", fact)
    assert record.host == "gpu01"
    assert record.outcome is None
    assert (record.drain_s, record.update_s, record.reboot_s, record.validation_s) == (None,) * 4
    assert (record.kernel_before, record.kernel_after, record.driver_before) == (None,) * 3
    assert (record.rebooted, record.validation, record.node, record.reason) == (None,) * 4


def test_patch_fact_text_keeps_what_is_readable() -> None:
    record = harvest.patch_record(
        "gpu01", {"outcome": "refused", "reason": "cordoned by\x00 alice ", "driver_before": 580, "run": 1234}
    )
    assert (record.outcome, record.reason) == ("refused", "cordoned by alice")
    assert (record.driver_before, record.maintenance_run) == ("580", "1234")


def test_patch_facts_are_not_hardware_facts(tmp_path: Path) -> None:
    gpu = {"gpurack_gpu": capture_facts()["gpurack_gpu"]}
    _write_events(
        tmp_path,
        [
            _ok("gpu01", {"ansible_facts": gpu}, "gpurack.bootstrap.gpu_facts"),
            _patch("gpu01", PATCHED),
            _patch("gpu02", PATCHED),  # a host that returned no hardware facts
            # patch.yml's batch sizes, delegated to localhost: the event names the node it ran for.
            _ok(
                "gpu03",
                {"ansible_facts": {"patch_batch_sizes": [1, 1]}, "_ansible_delegated_vars": {}},
            ),
        ],
    )
    (node,) = harvest.harvest(tmp_path)
    assert node.host == "gpu01"
    assert set(node.facts) == {"gpurack_gpu"}


def test_record_run_keeps_patch_outcomes_with_the_run(tmp_path: Path) -> None:
    gpu = {"gpurack_gpu": capture_facts()["gpurack_gpu"]}
    _write_events(
        tmp_path / "run",
        [
            _ok("gpu01", {"ansible_facts": gpu}, "gpurack.bootstrap.gpu_facts"),
            _patch("gpu01", HELD),
            _patch("gpu01", PATCHED),
            _patch("gpu02", "garbled"),
        ],
    )
    run_id = harvest.record_run(tmp_path / "run", "patch.yml", "successful", None)
    assert run_id is not None
    with open_store(None) as store:
        view = store.run(run_id)
        snapshot = store.snapshot("gpu01", run_id)
    assert [(p.host, p.outcome, p.node) for p in view.patches] == [
        ("gpu01", "patched", "lab-w1"),
        ("gpu02", None, None),
    ]
    assert view.playbook == "patch.yml"
    assert [n.host for n in view.nodes] == ["gpu01"]  # gpu02 returned no facts: no snapshot
    assert "gpurack_patch" not in snapshot.facts


def test_record_run_of_a_patch_run_without_facts_still_records(tmp_path: Path) -> None:
    _write_events(tmp_path / "run", [_patch("gpu01", HELD)])
    run_id = harvest.record_run(tmp_path / "run", "patch.yml", "failed", None)
    assert run_id is not None
    with open_store(None) as store:
        view = store.run(run_id)
        assert store.hosts() == ["gpu01"]
    assert (view.status, view.nodes, [p.outcome for p in view.patches]) == ("failed", (), ["held"])


def test_record_run_without_patch_facts_records_no_outcome(tmp_path: Path) -> None:
    gpu = {"gpurack_gpu": capture_facts()["gpurack_gpu"]}
    _write_events(tmp_path / "run", [_ok("gpu01", {"ansible_facts": gpu}, "gpurack.bootstrap.gpu_facts")])
    run_id = harvest.record_run(tmp_path / "run", "preflight.yml", "successful", None)
    assert run_id is not None
    with open_store(None) as store:
        assert store.run(run_id).patches == ()
    assert harvest.patch_outcomes(tmp_path / "run") == []
