# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""AI conformance (DESIGN.md, "Topology, gang admission, DRA, conformance"): the CNCF
Kubernetes AI Conformance requirements (`catalog`), the tests that can run on a gpurack
cluster beside them (`api_checks`, `metrics_checks`, `workload_checks`, run by `suite`), each a
result of the one result model, and what they are worth to the program (`evidence`: each
requirement's status, PRODUCT.yaml, JUnit XML).

Stdlib only: the `ai_conformance` module runs the suite against a `KubeCluster`; the unit tests
run it against fakes of `Cluster`; `gpurack conformance` writes the evidence.
"""

from __future__ import annotations

from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.catalog import (
    BY_ID,
    CATALOG,
    CATEGORIES,
    LEVELS,
    PROGRAM_VERSION,
    TIER,
    Requirement,
    requirement_of,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.cluster import (
    ApiError,
    Cluster,
    KubeCluster,
    poll,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.common import (
    CHECK_MODE_REASON,
    RUN_LABEL,
    Settings,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.evidence import (
    EVIDENCE_DIR,
    IMPLEMENTED,
    JUNIT_FILE,
    NOT_APPLICABLE,
    NOT_IMPLEMENTED,
    PARTIAL,
    PRODUCT_FILE,
    STATUSES,
    Status,
    evidence_page,
    junit,
    product,
    status_of,
    statuses,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.suite import TESTS, run, untested

__all__ = [
    "BY_ID",
    "CATALOG",
    "CATEGORIES",
    "CHECK_MODE_REASON",
    "EVIDENCE_DIR",
    "IMPLEMENTED",
    "JUNIT_FILE",
    "LEVELS",
    "NOT_APPLICABLE",
    "NOT_IMPLEMENTED",
    "PARTIAL",
    "PRODUCT_FILE",
    "PROGRAM_VERSION",
    "RUN_LABEL",
    "STATUSES",
    "TESTS",
    "TIER",
    "ApiError",
    "Cluster",
    "KubeCluster",
    "Requirement",
    "Settings",
    "Status",
    "evidence_page",
    "junit",
    "poll",
    "product",
    "requirement_of",
    "run",
    "status_of",
    "statuses",
    "untested",
]
