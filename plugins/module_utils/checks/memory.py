# Copyright: (c) 2026, gpurack maintainers
# Apache License 2.0 (see LICENSE)
"""GPU memory checks: ECC mode and errors, row remapping, page retirement; the measured
device-memory bandwidth (its measuring function is in gpurack.gpubench)."""

from __future__ import annotations

from typing import Any

from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.context import (
    Context,
    field,
    per_gpu,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.checks.registry import (
    WARN_FLOOR,
    CheckSpec,
    check,
    measured,
    result,
)
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_models import resolve_model
from ansible_collections.gpurack.bootstrap.plugins.module_utils.facts.gpu_views import GpuView
from ansible_collections.gpurack.bootstrap.plugins.module_utils.results.model import CheckResult

ECC_MODE = CheckSpec(
    "gpu.ecc.mode",
    "ECC enabled",
    "quick",
    "current ECC mode of each GPU",
    "enabled (fail on datacenter models, warn on models where ECC is optional)",
    "vendor doc: NVIDIA datacenter GPU deployment guide (ECC on by default)",
    "enable ECC (nvidia-smi -i <index> -e 1) and reset the GPU or reboot",
)


@check(ECC_MODE)
def check_ecc_mode(ctx: Context) -> list[CheckResult]:
    def judge(gpu: GpuView, enabled: Any) -> CheckResult:
        comp = gpu.component()
        model = resolve_model(gpu.field("name"), gpu.field("pci_device_id"))
        verdict = "pass" if enabled else ("fail" if model.ecc_expected else "warn")
        return result(
            ECC_MODE,
            verdict,
            component=comp,
            measured=enabled,
            expected=True,
            reason=None if enabled else f"{comp}: ECC is disabled",
            source=ctx.gpu_source(),
            lines=[f"{comp} ECC mode: {'enabled' if enabled else 'disabled'}"],
        )

    return per_gpu(ctx, ECC_MODE, field("ecc_mode"), judge, "ECC mode not reported (not supported)")


ECC_UNCORRECTED = CheckSpec(
    "gpu.ecc.uncorrected",
    "No uncorrected ECC errors",
    "quick",
    "volatile and aggregate uncorrected ECC error counts of each GPU",
    "volatile 0 (fail); aggregate 0 (warn: errors from earlier boots)",
    "vendor doc: NVIDIA GPU memory error management",
    "drain the node and reset the GPU; replace it if uncorrected errors recur",
)


def _ecc_counts(gpu: GpuView) -> dict[str, Any] | None:
    counts = {
        "volatile": gpu.field("ecc_errors.volatile_uncorrected"),
        "aggregate": gpu.field("ecc_errors.aggregate_uncorrected"),
    }
    return None if all(v is None for v in counts.values()) else counts


@check(ECC_UNCORRECTED)
def check_ecc_uncorrected(ctx: Context) -> list[CheckResult]:
    def judge(gpu: GpuView, counts: dict[str, Any]) -> CheckResult:
        comp = gpu.component()
        volatile, aggregate = counts["volatile"] or 0, counts["aggregate"] or 0
        if volatile:
            verdict, reason = "fail", f"{comp}: {volatile} uncorrected ECC errors since the last reset"
        elif aggregate:
            verdict, reason = "warn", f"{comp}: {aggregate} uncorrected ECC errors over the GPU's lifetime"
        else:
            verdict, reason = "pass", ""
        return result(
            ECC_UNCORRECTED,
            verdict,
            component=comp,
            measured=counts,
            expected=0,
            unit="errors",
            reason=reason,
            source=ctx.gpu_source(),
            lines=[f"{comp} uncorrected ECC: volatile {counts['volatile']}, aggregate {counts['aggregate']}"],
        )

    return per_gpu(ctx, ECC_UNCORRECTED, _ecc_counts, judge, "ECC error counts not reported")


def _flag_check(
    ctx: Context, entry: CheckSpec, path: str, *, bad: str, missing: str, label: str
) -> list[CheckResult]:
    def judge(gpu: GpuView, flag: Any) -> CheckResult:
        comp = gpu.component()
        return result(
            entry,
            "fail" if flag else "pass",
            component=comp,
            measured=flag,
            expected=False,
            reason=f"{comp}: {bad}" if flag else None,
            source=ctx.gpu_source(),
            lines=[f"{comp} {label}: {'yes' if flag else 'no'}"],
        )

    return per_gpu(ctx, entry, field(path), judge, missing)


REMAP_PENDING = CheckSpec(
    "gpu.remapped_rows.pending",
    "No pending row remaps",
    "quick",
    "whether a row remap waits for a GPU reset",
    "not pending",
    "vendor doc: NVIDIA GPU memory error management (row remapping)",
    "drain the node and reset the GPU (nvidia-smi -r -i <index>) so the pending remap takes effect",
)


@check(REMAP_PENDING)
def check_remapped_rows_pending(ctx: Context) -> list[CheckResult]:
    return _flag_check(
        ctx,
        REMAP_PENDING,
        "remapped_rows.pending",
        bad="a row remap is pending a GPU reset",
        missing="row remapping not reported (pre-Ampere GPU)",
        label="remapped rows pending",
    )


REMAP_FAILURE = CheckSpec(
    "gpu.remapped_rows.failure",
    "No row remapping failure",
    "quick",
    "whether row remapping has failed (no spare rows left)",
    "no failure",
    "vendor doc: NVIDIA GPU memory error management (row remapping)",
    "drain the node and replace the GPU (RMA): it has run out of spare rows",
)


@check(REMAP_FAILURE)
def check_remapped_rows_failure(ctx: Context) -> list[CheckResult]:
    return _flag_check(
        ctx,
        REMAP_FAILURE,
        "remapped_rows.failure",
        bad="row remapping failed: no spare rows left",
        missing="row remapping not reported (pre-Ampere GPU)",
        label="row remapping failure",
    )


RETIRED_PENDING = CheckSpec(
    "gpu.retired_pages.pending",
    "No pending page retirement",
    "quick",
    "whether a retired page waits for a GPU reset (pre-Ampere GPUs)",
    "not pending",
    "vendor doc: NVIDIA GPU memory error management (dynamic page retirement)",
    "drain the node and reset the GPU so the retirement takes effect",
)


@check(RETIRED_PENDING)
def check_retired_pages_pending(ctx: Context) -> list[CheckResult]:
    return _flag_check(
        ctx,
        RETIRED_PENDING,
        "retired_pages.pending",
        bad="a page retirement is pending a GPU reset",
        missing="page retirement not reported (Ampere and later remap rows instead)",
        label="retired pages pending",
    )


# --- measured (gpurack.gpubench measures it) ---------------------------------------------------

D2D_BANDWIDTH = measured(
    "gpu.d2d_bandwidth",
    "Device memory bandwidth",
    "standard",
    "device-to-device copy rate (bytes read plus written) per GPU, TB/s",
    share_of="the model's HBM bandwidth",
    remediation="check clocks (gpu.clocks_event_reasons) and ECC errors; replace the GPU if it stays low",
    model_field="hbm_tbps",
    ratios=(0.75, WARN_FLOOR),
    threshold_source="the datasheet HBM rate is the pin-rate peak; a sustained copy loses 10-15 % to "
    "refresh, row switches and read/write turnaround (a real H200 copied 4.26 of 4.8 TB/s, 89 %): "
    "pass >= 75 %, warn >= 60 %, fail below",
    module=__name__,
)
