# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""Acceptance filters: the job, the prices, the rows and their lines, for training and for
inference (docs: the .yml beside)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.gpurack.bootstrap.plugins.module_utils.acceptance import (
    InferenceObserved,
    JobSpec,
    LoadSpec,
    Observed,
    inference_rows,
    inference_summary,
    job_objects,
    load_job,
    observed,
    read_inference_settings,
    read_settings,
    row_line,
    rows,
    run_summary,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.cost import (
    CostError,
    pools_from_hosts,
    site_costs,
)


def acceptance_job_objects(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The headless Service and the Indexed Job of the acceptance run `spec` describes."""
    if not isinstance(spec, Mapping):
        raise AnsibleFilterError(
            "acceptance_job_objects expects a mapping (name, namespace, queue, image, ...)"
        )
    try:
        return job_objects(JobSpec.from_mapping(spec))
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"acceptance_job_objects: {exc}") from None


def acceptance_rows(raw: Mapping[str, Any], acceptance: Any = None) -> list[dict[str, Any]]:
    """The seven rows (the one result shape) from the role's read of the cluster and
    `gpurack_acceptance` (thresholds, baseline)."""
    if not isinstance(raw, Mapping):
        raise AnsibleFilterError("acceptance_rows expects the mapping the acceptance role gathered")
    try:
        wanted = read_settings(acceptance)
        seen = Observed.from_mapping(observed(raw))
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"acceptance_rows: {exc}") from None
    return [row.to_dict() for row in rows(seen, wanted)]


def acceptance_summary(raw: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the run comes to beside its `results` (the rows of acceptance_rows on the same
    `raw`): outcome, GPUs and their allocation, useful units and cost, for the inventory DB."""
    if not isinstance(raw, Mapping) or isinstance(results, (str, bytes, Mapping)):
        raise AnsibleFilterError("acceptance_summary expects the gathered mapping and the rows made from it")
    try:
        seen = Observed.from_mapping(observed(raw))
        return run_summary(seen, [r for r in results if isinstance(r, Mapping)])
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"acceptance_summary: {exc}") from None


def acceptance_prices(
    hostvars: Mapping[str, Mapping[str, Any]], hosts: Sequence[str], site: Any = None
) -> dict[str, Any]:
    """Each pool's price per GPU-hour (from its hosts' `gpurack_pool.cost`) and the site's
    monthly costs and currency (`gpurack_site_costs`)."""
    if isinstance(hosts, (str, bytes)):
        raise AnsibleFilterError("acceptance_prices expects hostvars and a list of host names")
    try:
        _pools, gpu_hour = pools_from_hosts({h: hostvars[h] for h in hosts})
        monthly, currency = site_costs(site)
    except CostError as exc:
        raise AnsibleFilterError(f"acceptance_prices: {exc}") from None
    except KeyError as exc:
        raise AnsibleFilterError(f"acceptance_prices: host {exc} is not in hostvars") from None
    return {"gpu_hour": gpu_hour, "monthly": monthly, "currency": currency}


def acceptance_node(node: Mapping[str, Any]) -> dict[str, Any]:
    """A Node object cut to its name and labels (what the rows read of it)."""
    meta = node.get("metadata") if isinstance(node, Mapping) else None
    if not isinstance(meta, Mapping):
        raise AnsibleFilterError("acceptance_node expects a Node object")
    return {"metadata": {"name": meta.get("name"), "labels": dict(meta.get("labels") or {})}}


def acceptance_row_line(row: Mapping[str, Any]) -> str:
    """One row as a line of text: id, verdict, figure with its unit, and why."""
    if not isinstance(row, Mapping):
        raise AnsibleFilterError("acceptance_row_line expects one row of acceptance_rows")
    return row_line(row)


def inference_load_job(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The load tool's Job for one load `spec` describes (name, namespace, image, url, ...)."""
    if not isinstance(spec, Mapping):
        raise AnsibleFilterError("inference_load_job expects a mapping (name, namespace, image, url, ...)")
    try:
        return load_job(LoadSpec.from_mapping(spec))
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"inference_load_job: {exc}") from None


def inference_acceptance_rows(
    raw: Mapping[str, Any], acceptance: Any = None, latency_objective_ms: Any = None
) -> list[dict[str, Any]]:
    """The eight inference rows from the role's read of the cluster, `gpurack_inference_acceptance`
    and the service's latency objective (the p99 threshold when the inventory sets none)."""
    if not isinstance(raw, Mapping):
        raise AnsibleFilterError("inference_acceptance_rows expects the mapping the role gathered")
    try:
        wanted = read_inference_settings(acceptance, latency_objective_ms)
        seen = InferenceObserved.from_mapping(raw)
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"inference_acceptance_rows: {exc}") from None
    return [row.to_dict() for row in inference_rows(seen, wanted)]


def inference_acceptance_summary(
    raw: Mapping[str, Any], results: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """What the inference run comes to beside its rows, in the shape the inventory DB keeps."""
    if not isinstance(raw, Mapping) or isinstance(results, (str, bytes, Mapping)):
        raise AnsibleFilterError("inference_acceptance_summary expects the gathered mapping and its rows")
    try:
        return inference_summary(
            InferenceObserved.from_mapping(raw), [r for r in results if isinstance(r, Mapping)]
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"inference_acceptance_summary: {exc}") from None


class FilterModule:
    """gpurack.bootstrap acceptance filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "acceptance_job_objects": acceptance_job_objects,
            "acceptance_node": acceptance_node,
            "acceptance_prices": acceptance_prices,
            "acceptance_row_line": acceptance_row_line,
            "acceptance_rows": acceptance_rows,
            "acceptance_summary": acceptance_summary,
            "inference_acceptance_rows": inference_acceptance_rows,
            "inference_acceptance_summary": inference_acceptance_summary,
            "inference_load_job": inference_load_job,
        }
