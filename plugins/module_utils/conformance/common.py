# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""What every conformance test shares: its settings and how it makes its result (the one
result model, tier `conformance`, component the requirement's id)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.catalog import (
    TIER,
    requirement_of,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.conformance.cluster import ApiError, Cluster
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results import CheckResult, Evidence, Verdict

CHECK_MODE_REASON = "check mode: the test creates objects, none was created"
# On every object a test creates, so that a run that was cut short can be cleaned up by label.
RUN_LABEL = "gpurack.io/conformance-run"


@dataclass(frozen=True)
class Settings:
    """Where and with what the tests run (role variables conformance_*)."""

    namespace: str
    queue: str
    cluster_queue: str
    run: str = "gpurack-conformance"
    gpu_resource: str = "nvidia.com/gpu"
    pause_image: str = "registry.k8s.io/pause:3.10"
    probe_image: str = ""
    probe_command: tuple[str, ...] = ("/bin/sh", "-c", "ls -1d /dev/nvidia* 2>/dev/null; true")
    probe_node: str = ""
    gang_pods: int = 2
    gang_gpus_per_pod: int = 1
    gang_unfit_pods: int = 64
    timeout_s: float = 60.0
    hold_s: float = 10.0
    every_s: float = 1.0
    workload_job: str = "inference"
    create: bool = True

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> Settings:
        """Settings from the module's parameters (unknown keys ignored, None is the default)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in raw.items() if k in known and v is not None}
        if "probe_command" in values:
            values["probe_command"] = tuple(str(x) for x in values["probe_command"])
        return cls(**values)

    def name(self, what: str) -> str:
        """An object name of this run: `<run>-<what>`, at most 63 characters."""
        return f"{self.run}-{what}"[:63].rstrip("-")


def result(
    test_id: str, verdict: Verdict, reason: str = "", lines: Iterable[str] = (), **extra: Any
) -> CheckResult:
    """The result of automated test `test_id` (its requirement is its component)."""
    requirement = requirement_of(test_id)
    component = requirement.id if requirement else test_id
    remediation = extra.pop("remediation", None) or (f"see docs/conformance.md, {component}")
    return CheckResult(
        id=test_id,
        verdict=verdict,
        title=test_id.split(".", 1)[1],
        tier=TIER,
        component=component,
        reason=reason,
        remediation=remediation,
        evidence=Evidence(source="cluster", lines=tuple(lines)),
        **extra,
    )


def api_failed(test_id: str, doing: str, exc: ApiError) -> CheckResult:
    """A test that could not finish because the API refused a call: fail, saying what it was doing."""
    return result(test_id, Verdict.FAIL, f"{doing}: {exc}")


def delete_quietly(cluster: Cluster, *paths: str) -> None:
    """Delete what a test made; a delete the API refuses is left (its objects carry RUN_LABEL)."""
    for path in paths:
        with contextlib.suppress(ApiError):
            cluster.delete(path)


def conditions(obj: Mapping[str, Any] | None) -> dict[str, str]:
    """An object's status conditions, type -> status."""
    found = ((obj or {}).get("status") or {}).get("conditions") or []
    return {str(c.get("type")): str(c.get("status")) for c in found if isinstance(c, Mapping)}


def items(listing: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The `items` of a list answer (none when the path is not served)."""
    return [i for i in (listing or {}).get("items") or [] if isinstance(i, dict)]


def meta_name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")
