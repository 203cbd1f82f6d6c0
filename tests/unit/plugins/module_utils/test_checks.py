"""The quick tier as a whole: result shape, registry, summary, tiers; the catalogue and its derived files."""

from __future__ import annotations

import pytest
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks import COMPONENTS, ExpectError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.registry import (
    checks_for_tier,
    model_expected,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_models import find_model
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import summarise
from gpurack import docsgen

from .check_builders import (
    CATALOGUE,
    EXPECT,
    POOL,
    REGISTRY,
    RESULT_KEYS,
    by_id,
    node,
    run_checks,
)


def test_run_checks_healthy_node_passes_every_quick_check() -> None:
    results = run_checks(node(), EXPECT, pool=POOL)
    assert summarise(results)["verdict"] == "pass"
    assert {r["id"] for r in results} == {c.id for c in checks_for_tier("quick", on_host=True)}
    not_passed = {r["id"] for r in results if r["verdict"] != "pass"}
    assert not_passed == {"gpu.retired_pages.pending"}  # Hopper remaps rows: nothing to retire


def test_run_checks_results_have_the_shared_shape() -> None:
    for item in run_checks(node(), EXPECT) + run_checks({}, {}):
        assert set(item) == RESULT_KEYS
        assert item["verdict"] in ("pass", "warn", "fail", "skip")
        assert set(item["evidence"]) == {"source", "lines"}
        assert isinstance(item["evidence"]["lines"], list)
        if item["verdict"] == "skip":
            assert item["reason"]
        if item["verdict"] in ("warn", "fail"):
            assert item["reason"] and item["remediation"]


def test_registry_covers_every_quick_catalogue_entry() -> None:
    assert set(REGISTRY) == {c.id for c in CATALOGUE if c.tier == "quick" and c.component != "switch"}


def test_summarise_counts_verdicts_and_fails_on_any_fail() -> None:
    results = [{"verdict": v} for v in ("pass", "pass", "warn", "skip", "fail")]
    assert summarise(results) == {"pass": 2, "warn": 1, "fail": 1, "skip": 1, "verdict": "fail"}
    # issue 12: a warn is a warn everywhere (the old _checks.summarise counted it as a pass).
    assert summarise([{"verdict": "warn"}])["verdict"] == "warn"


def test_run_checks_no_facts_skips_everything_with_reasons() -> None:
    results = run_checks({}, EXPECT)
    assert {r["verdict"] for r in results} == {"skip"}


def test_run_checks_without_expectations_skips_expectation_checks() -> None:
    results = run_checks(node(), {})
    assert by_id(results, "gpu.count")[0]["verdict"] == "skip"
    assert by_id(results, "gpu.count")[0]["reason"] == "not checked: gpurack_expect.gpu.count is not set"
    assert by_id(results, "gpu.count")[0]["measured"] == 8
    assert all(r["verdict"] == "pass" for r in by_id(results, "gpu.remapped_rows.pending"))


def test_run_checks_invalid_expect_raises_with_every_path() -> None:
    with pytest.raises(ExpectError) as info:
        run_checks(node(), {"gpu": {"count": "eight"}, "nope": 1})
    assert info.value.errors == [
        "gpurack_expect.gpu.count: expected a non-negative integer, got 'eight'",
        "gpurack_expect.nope: unknown key (known: gpu, rdma, numa_nodes, nvme, driver, cuda, os)",
    ]


def test_run_checks_unknown_tier_raises() -> None:
    with pytest.raises(ValueError, match="tier"):
        run_checks(node(), {}, tier="slow")


def test_run_checks_standard_tier_skips_measurements_it_cannot_take() -> None:
    results = run_checks(node(), EXPECT, tier="standard")
    assert by_id(results, "gpu.bf16_matmul")[0]["verdict"] == "skip"


def test_catalogue_ids_are_unique_and_tiers_known() -> None:
    ids = [c.id for c in CATALOGUE]
    assert len(ids) == len(set(ids))
    assert all(
        c.tier in ("quick", "standard", "burn-in") and c.limit_source and c.remediation for c in CATALOGUE
    )


def test_catalogue_standard_limits_come_from_the_model_table() -> None:
    h200 = find_model("NVIDIA H200")
    assert h200 is not None
    limits = {c.id: model_expected(c, h200) for c in CATALOGUE if c.tier == "standard"}
    assert limits == {
        "gpu.h2d_bandwidth": 50.412,
        "gpu.d2h_bandwidth": 50.412,
        "gpu.d2d_bandwidth": 3.6,
        "gpu.bf16_matmul": 742.05,
        "gpu.allreduce_busbw": 315.0,
        "counters.delta": None,
    }


def test_docs_checks_md_is_generated_from_the_catalogue() -> None:
    assert (docsgen.ROOT / docsgen.CHECKS_MD).read_text() == docsgen.checks_markdown()


def test_derived_files_are_what_the_specs_give() -> None:
    """docs/checks.md and the preflight argument spec: `python -m gpurack.docsgen` rewrites them."""
    assert docsgen.stale() == []
    assert docsgen.main(["--check"]) == 0


def test_docs_checks_md_states_the_verdict_rule() -> None:
    text = docsgen.checks_markdown()
    assert "\n## Verdicts\n" in text
    assert "a run's verdict is the same rule over its nodes' verdicts" in text
    assert "A `warn` never counts as a pass" in text


def test_every_spec_sits_in_its_component_module_and_schema_keys_come_from_specs() -> None:
    assert {c.component for c in CATALOGUE} == set(COMPONENTS)
    declared = {key.path for c in CATALOGUE for key in c.expects}
    assert "gpu.pcie.gen" in declared and "numa_nodes" in declared
    measured = [c for c in CATALOGUE if c.tier != "quick"]
    assert measured and all(c.id not in REGISTRY for c in measured)  # measured in gpubench


def test_switch_checks_are_registered_but_never_run_over_a_hosts_facts() -> None:
    switch = [c for c in CATALOGUE if c.component == "switch"]
    assert {c.id for c in switch} >= {"switch.cabling", "switch.port.state", "switch.port.roce"}
    assert {c.id for c in checks_for_tier("quick")} >= {c.id for c in switch}
    ran = {r["id"] for r in run_checks(node(), EXPECT, pool=POOL) + run_checks({}, {}, tier="burn-in")}
    assert not ran & {c.id for c in switch}
