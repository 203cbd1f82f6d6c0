# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The whole run: every automated test in the catalog's order, plus one skip result for each
requirement that no test covers, saying why."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Union

from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.api_checks import (
    dra_allocation,
    dra_api,
    reconciles,
    webhook,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.catalog import (
    CATALOG,
    TIER,
    Requirement,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.cluster import Cluster
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.common import Settings
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.metrics_checks import (
    custom_metric,
    dcgm,
    discovered,
    scales,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.workload_checks import (
    ALL_OR_NOTHING,
    FITS,
    NO_REQUEST,
    REQUEST,
    access,
    gang,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import CheckResult, Verdict

Test = Callable[[Cluster, Settings], Union[CheckResult, list[CheckResult]]]  # noqa: UP007
# Each function and the test ids it answers for (a function may run two halves of one setup).
TESTS: tuple[tuple[Test, tuple[str, ...]], ...] = (
    (dra_api, ("conformance.dra_support.api",)),
    (dra_allocation, ("conformance.dra_support.allocation",)),
    (gang, (FITS, ALL_OR_NOTHING)),
    (custom_metric, ("conformance.pod_autoscaling.custom_metric",)),
    (scales, ("conformance.pod_autoscaling.scales",)),
    (dcgm, ("conformance.accelerator_metrics.dcgm",)),
    (discovered, ("conformance.ai_service_metrics.discovered",)),
    (access, (NO_REQUEST, REQUEST)),
    (webhook, ("conformance.robust_controller.webhook",)),
    (reconciles, ("conformance.robust_controller.reconciles",)),
)


def untested(requirement: Requirement) -> CheckResult:
    """The one result of a requirement no test covers: skip, with why."""
    return CheckResult(
        id=f"{TIER}.{requirement.id}",
        verdict=Verdict.SKIP,
        title=requirement.id,
        tier=TIER,
        component=requirement.id,
        reason=("not applicable: " if requirement.not_applicable else "not implemented: ")
        + requirement.untested,
    )


def run(cluster: Cluster, settings: Settings, only: Sequence[str] = ()) -> list[CheckResult]:
    """Every test (or those of the requirements in `only`), then the untested requirements'
    results, ordered as the catalog."""
    found: dict[str, CheckResult] = {}
    for test, ids in TESTS:
        if only and not any(i.split(".")[1] in only for i in ids):
            continue
        started = time.monotonic()
        answer = test(cluster, settings)
        taken = round((time.monotonic() - started) / len(ids), 3)  # halves of one setup share its time
        for item in answer if isinstance(answer, list) else [answer]:
            found[item.id] = replace(item, duration_s=taken)
    out: list[CheckResult] = []
    for requirement in CATALOG:
        if only and requirement.id not in only:
            continue
        out.extend(found[t] for t in requirement.tests if t in found)
        if not requirement.tests:
            out.append(untested(requirement))
    return out
