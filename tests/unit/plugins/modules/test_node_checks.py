"""node_checks module: main() end to end over facts of the real H200 capture."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest
from ansible.module_utils import basic
from ansible.module_utils.common.text.converters import to_bytes
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu import gather_gpu
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.numa import gather_numa
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.source import CaptureSource
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult
from conftest import H200X1

EXPECT = {
    "gpu": {"count": 1, "model": "NVIDIA H200", "min_memory_mib": 140000, "pcie": {"gen": 5, "width": 16}}
}


def _facts() -> dict[str, Any]:
    source = CaptureSource(H200X1)
    return {"gpurack_gpu": gather_gpu(source), "gpurack_numa": gather_numa(source)}


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **args: Any) -> dict[str, Any]:
    """Run node_checks main() as Ansible would and return its JSON result."""
    payload = {
        "ANSIBLE_MODULE_ARGS": {"_ansible_remote_tmp": "/tmp", "_ansible_keep_remote_files": False, **args}
    }
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps(payload)))
    # ansible-core 2.19 also needs the serialization profile the controller would have sent.
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy")
    module = importlib.import_module("ansible_collections.gpurack.bootstrap.plugins.modules.node_checks")
    with pytest.raises(SystemExit):
        module.main()
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def test_node_checks_h200x1_passes_unchanged(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _run(monkeypatch, capsys, facts=_facts(), expect=EXPECT)
    assert result["changed"] is False
    assert "failed" not in result
    assert result["summary"]["verdict"] == "pass"
    assert result["summary"]["fail"] == 0
    assert {r["id"] for r in result["results"] if r["verdict"] == "pass"} >= {
        "gpu.count",
        "gpu.model",
        "gpu.memory",
    }


def test_node_checks_failed_check_does_not_fail_module(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _run(monkeypatch, capsys, facts=_facts(), expect={"gpu": {"count": 8}})
    assert "failed" not in result
    assert result["summary"]["verdict"] == "fail"
    [count] = [r for r in result["results"] if r["id"] == "gpu.count"]
    assert (count["verdict"], count["reason"]) == ("fail", "1 GPUs found, expected 8")


def test_node_checks_check_mode_returns_same_results(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    normal = _run(monkeypatch, capsys, facts=_facts(), expect=EXPECT)
    checked = _run(monkeypatch, capsys, facts=_facts(), expect=EXPECT, _ansible_check_mode=True)
    assert checked["results"] == normal["results"]
    assert checked["changed"] is False


def test_node_checks_invalid_expect_fails_listing_every_path(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _run(monkeypatch, capsys, facts={}, expect={"gpu": {"count": "eight"}, "numa": 2})
    assert result["failed"] is True
    assert result["errors"] == [
        "gpurack_expect.gpu.count: expected a non-negative integer, got 'eight'",
        "gpurack_expect.numa: unknown key (known: gpu, rdma, numa_nodes, nvme, driver, cuda, os)",
    ]
    assert result["msg"].startswith("Invalid gpurack_expect: gpurack_expect.gpu.count")


def test_node_checks_refuses_unknown_tier(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _run(monkeypatch, capsys, facts={}, tier="burn-in")
    assert result["failed"] is True
    assert "tier" in result["msg"]


def test_node_checks_no_facts_skips_with_reasons(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _run(monkeypatch, capsys, facts={})
    assert result["summary"]["skip"] == len(result["results"])
    assert all(r["reason"] for r in result["results"])


def test_node_checks_counts_extra_results_and_a_warn_is_the_node_verdict(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The preflight role hands in a facts module's failure; the module's summary is the verdict."""
    warn = {
        "id": "preflight.facts.nic",
        "title": "Hardware facts can be read (gpurack_nic)",
        "component": "nic",
        "verdict": "warn",
        "reason": "ibstat printed nothing",
        "remediation": "run ibstat by hand",
        "evidence": {"source": "gpurack_nic facts module", "lines": ["stderr"]},
    }
    result = _run(monkeypatch, capsys, facts=_facts(), expect=EXPECT, extra_results=[warn])
    assert result["results"][0]["id"] == "preflight.facts.nic"
    assert result["summary"]["warn"] == 1 and result["summary"]["fail"] == 0
    assert result["summary"]["verdict"] == "warn"  # never printed as pass
    failing = dict(warn, verdict="fail")
    result = _run(monkeypatch, capsys, facts=_facts(), expect=EXPECT, extra_results=[failing])
    assert result["summary"]["verdict"] == "fail"


def test_node_checks_results_have_the_shared_shape(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _run(monkeypatch, capsys, facts=_facts(), expect=EXPECT)
    assert set(result["summary"]) == {"pass", "warn", "fail", "skip", "verdict"}
    for item in result["results"]:
        assert CheckResult.from_dict(item).to_dict() == item
        assert len(item["evidence"]["lines"]) <= 20


@pytest.mark.parametrize(("sharing", "verdict"), [("full-gpu", "fail"), ("mig", "pass"), (None, "skip")])
def test_node_checks_compares_mig_mode_with_the_pool_option(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], sharing: str | None, verdict: str
) -> None:
    facts = _facts()
    facts["gpurack_gpu"]["gpus"][0].update(mig_mode=True, mig_mode_pending=True)
    pool = {"name": "h200-inference", "sharing": sharing} if sharing else {}
    result = _run(monkeypatch, capsys, facts=facts, expect=EXPECT, pool=pool)
    [mig] = [r for r in result["results"] if r["id"] == "gpu.mig_mode"]
    assert mig["verdict"] == verdict
