# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""The CNCF Kubernetes AI Conformance requirements (program version v1.35), as gpurack meets or
does not meet them: each requirement's id, category and level as the program's checklist names
them, what it asks in our words, the automated tests that stand for it here, and, for what no
test covers, why not.
"""

from __future__ import annotations

from dataclasses import dataclass

PROGRAM_VERSION = "v1.35"
TIER = "conformance"
# The checklist's categories, in its order (the keys under `spec` of PRODUCT.yaml).
CATEGORIES: tuple[str, ...] = (
    "accelerators",
    "networking",
    "schedulingOrchestration",
    "observability",
    "security",
    "operator",
)
LEVELS: tuple[str, ...] = ("MUST", "SHOULD")


@dataclass(frozen=True)
class Requirement:
    """One requirement: `tests` are the ids of its automated tests (none: `untested` says why)."""

    id: str
    category: str
    level: str
    description: str
    how: str
    tests: tuple[str, ...] = ()
    untested: str = ""
    not_applicable: bool = False


def _test(requirement: str, aspect: str) -> str:
    return f"{TIER}.{requirement}.{aspect}"


CATALOG: tuple[Requirement, ...] = (
    Requirement(
        "dra_support",
        "accelerators",
        "MUST",
        "The Dynamic Resource Allocation APIs are served, so a workload can ask for devices by "
        "their attributes rather than by a count.",
        "resource.k8s.io/v1 lists DeviceClass, ResourceClaim, ResourceClaimTemplate and "
        "ResourceSlice; where a DeviceClass exists, a claim on it is allocated to a pod.",
        (_test("dra_support", "api"), _test("dra_support", "allocation")),
    ),
    Requirement(
        "driver_runtime_management",
        "accelerators",
        "SHOULD",
        "A verifiable way to keep accelerator drivers and the container runtime's configuration "
        "compatible and installed on accelerator nodes.",
        "Not in this run: `gpurack validate` checks the driver, CUDA and runtime on each node.",
        untested="checked per node by `gpurack validate` (driver, CUDA, container runtime), "
        "not by a cluster test in `gpurack conformance`",
    ),
    Requirement(
        "gpu_sharing",
        "accelerators",
        "SHOULD",
        "At least one way to share a GPU (partitioning or time-slicing) for work that needs "
        "less than a whole GPU.",
        "Not in this run: pools declare `sharing: mig | time-slicing`; no cluster test yet.",
        untested="pools declare MIG or time-slicing sharing through the device plugin's "
        "configuration, but no cluster test exercises it yet",
    ),
    Requirement(
        "virtualized_accelerator",
        "accelerators",
        "SHOULD",
        "Virtualized accelerators (e.g. vGPU) exposed and managed like physical fractions.",
        "Not in this run: gpurack manages bare-metal GPUs, no vGPU.",
        untested="gpurack installs bare-metal GPU nodes; it does not manage vGPU",
    ),
    Requirement(
        "ai_inference",
        "networking",
        "MUST",
        "The Gateway API with an implementation, for inference traffic: weighted splits and "
        "routing on request headers.",
        "Not in this run: gpurack installs no Gateway API implementation.",
        untested="gpurack installs no Gateway API implementation; inference services are plain Services",
    ),
    Requirement(
        "gang_scheduling",
        "schedulingOrchestration",
        "MUST",
        "A gang scheduler that admits a distributed job's pods all together or not at all.",
        "Kueue (waitForPodsReady): a job of N pods in a team's queue runs all N; a job larger "
        "than the queue can hold gets no running pod.",
        (_test("gang_scheduling", "fits"), _test("gang_scheduling", "all_or_nothing")),
    ),
    Requirement(
        "cluster_autoscaling",
        "schedulingOrchestration",
        "MUST",
        "Where the platform has a cluster autoscaler, it scales accelerator node groups on pending pods.",
        "Not applicable: bare-metal racks have no cluster autoscaler.",
        untested="gpurack builds clusters on a fixed set of bare-metal servers and provides "
        "no cluster autoscaler",
        not_applicable=True,
    ),
    Requirement(
        "pod_autoscaling",
        "schedulingOrchestration",
        "MUST",
        "The HorizontalPodAutoscaler works for accelerator pods, on custom AI metrics.",
        "An inference service's HPA on its runtime's metric is active (custom.metrics.k8s.io "
        "serves it) for a Deployment whose pods ask for GPUs; scaling itself is `gpurack "
        "accept --inference`'s autoscale row.",
        (_test("pod_autoscaling", "custom_metric"), _test("pod_autoscaling", "scales")),
    ),
    Requirement(
        "accelerator_metrics",
        "observability",
        "MUST",
        "Per-accelerator utilization and memory metrics on a machine-readable endpoint.",
        "Prometheus holds DCGM exporter series of GPU utilization and framebuffer use.",
        (_test("accelerator_metrics", "dcgm"),),
    ),
    Requirement(
        "ai_service_metrics",
        "observability",
        "MUST",
        "A monitoring system that discovers workloads and collects their Prometheus metrics.",
        "Prometheus has discovered and scrapes (target up) at least one workload pod.",
        (_test("ai_service_metrics", "discovered"),),
    ),
    Requirement(
        "secure_accelerator_access",
        "security",
        "MUST",
        "Accelerators are reachable from a container only through the resource framework "
        "(device plugin or DRA).",
        "On a GPU node, a pod that asks for no GPU sees no /dev/nvidia* device; one that asks "
        "for a GPU sees one.",
        (_test("secure_accelerator_access", "no_request"), _test("secure_accelerator_access", "request")),
    ),
    Requirement(
        "robust_controller",
        "operator",
        "MUST",
        "A complex AI operator with CRDs runs: its webhooks answer and its objects reconcile.",
        "Kueue: its webhook refuses an invalid Job and defaults a valid one (server-side dry "
        "run), and a LocalQueue it is given becomes Active.",
        (_test("robust_controller", "webhook"), _test("robust_controller", "reconciles")),
    ),
)
BY_ID: dict[str, Requirement] = {r.id: r for r in CATALOG}
TESTS: dict[str, Requirement] = {t: r for r in CATALOG for t in r.tests}


def requirement_of(test_id: str) -> Requirement | None:
    """The requirement an automated test's id belongs to, or None."""
    return TESTS.get(test_id)
